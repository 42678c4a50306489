import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Outcome log")
struct OutcomeLogTests {
    @Test func theTallyKeepsEveryCountWhetherKeysRepeatOrAlternate() {
        typealias Key = OutcomeRecorder.Key
        let committed = Key(minute: 7, path: .modern, outcome: "committed")
        let conflict = Key(minute: 7, path: .modern, outcome: "conflict")
        let legacy = Key(minute: 7, path: .legacy, outcome: "committed")
        let later = Key(minute: 8, path: .modern, outcome: "committed")
        var counts = OutcomeRecorder.Counts()
        for key in [committed, committed, conflict, committed, legacy, legacy, later, committed] {
            counts.add(1, to: key)
        }
        let expected: [Key: Int64] = [committed: 4, conflict: 1, legacy: 2, later: 1]
        #expect(counts.all == expected)
        #expect(counts.all == expected, "reading the counts leaves them in place")
        #expect(counts.take() == expected)
        #expect(counts.take().isEmpty)
        counts.add(5, to: conflict)
        counts.add(2, to: conflict)
        #expect(counts.take() == [conflict: 7])
    }

    @Test func countsOutcomesPerPathAndMinuteWithoutPayloads() async throws {
        let db = try await StoreDatabase.make("outcome_log")
        let legacy = LegacyDraftAdapter(storage: db.store)
        let modern = ModernDraftAdapter(storage: db.store)
        let create = SaveDraft(operationScope: "t", operationID: "create", draftID: "d", expectedRevision: 0,
                               content: DraftContent(title: "secret title"))
        _ = try await modern.save(create)
        _ = try await legacy.save(create)                                   // replayed
        _ = try? await legacy.save(SaveDraft(operationScope: "t", operationID: "stale", draftID: "d", expectedRevision: 5,
                                             content: DraftContent(title: "secret title")))   // conflict
        _ = try? await modern.save(SaveDraft(operationScope: "t", operationID: "", draftID: "d", expectedRevision: 1,
                                             content: DraftContent(title: "x")))              // invalid
        #expect(db.store.outcomes.unflushed.count == 4)
        try await db.store.outcomes.flush()
        #expect(db.store.outcomes.unflushed.isEmpty)
        _ = try await modern.save(SaveDraft(operationScope: "t", operationID: "edit", draftID: "d", expectedRevision: 1,
                                            content: DraftContent(title: "again")))
        try await db.store.outcomes.flush()
        let rows = try await db.sql { connection in
            try connection.query("""
                SELECT path, outcome, sum(count)::bigint AS n, bool_and(date_trunc('minute', minute) = minute) AS whole
                  FROM cutover.outcome_log GROUP BY path, outcome ORDER BY path, outcome
                """).map { "\(try $0.decode(String.self, "path")) \(try $0.decode(String.self, "outcome")) \(try $0.decode(Int.self, "n")) \(try $0.decode(Bool.self, "whole"))" }
        }
        #expect(rows == ["legacy conflict 1 true", "legacy replayed 1 true", "modern committed 2 true", "modern invalid 1 true"])
        let leaked = try await db.sql { connection in
            try connection.query("SELECT count(*) AS n FROM cutover.outcome_log l WHERE l::text LIKE '%secret%' OR l::text LIKE '%create%'")[0]
                .decode(Int.self, "n")
        }
        #expect(leaked == 0)
        await db.close()
    }
}
