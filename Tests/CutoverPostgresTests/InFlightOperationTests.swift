import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// A second save of an operation whose first save is still in flight.
@Suite("Operations in flight")
struct InFlightOperationTests {
    private let request = SaveDraft(operationScope: "t", operationID: "edit", draftID: "d", expectedRevision: 1,
                                    content: DraftContent(title: "Plan, revised"))

    /// Starts the first save of `request` on a connection of its own and leaves its
    /// transaction open: the operation is claimed but not committed.
    private func beginFirstSave(_ db: StoreDatabase) async throws -> PostgresConnection {
        let create = SaveDraft(operationScope: "t", operationID: "create", draftID: "d", expectedRevision: 0,
                               content: DraftContent(title: "Plan"))
        _ = try await LegacyDraftAdapter(storage: db.store).save(create)
        let first = try db.database.connect(applicationName: "first-save")
        try first.execute(unsafeSQL: "BEGIN")
        let row = try first.query("""
            SELECT outcome FROM cutover.save_draft(\(request.operationScope), \(request.operationID), \(request.canonicalEncoding),
                \(request.draftID), \(request.expectedRevision), \("legacy"), \(request.content.title), \(String?.none), \(Int32(5000)))
            """)[0]
        #expect(try row.decode(String.self, "outcome") == "committed")
        return first
    }

    /// Waits until a backend of the store is waiting on a lock.
    private func waitForBlockedSave(_ db: StoreDatabase) async throws {
        let isWaiting = try await eventually(pause: .milliseconds(10)) {
            try await db.sql { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'cutover-store-test' AND wait_event_type = 'Lock' AND datname = current_database()
                    """)[0].decode(Int.self, "n")
            } > 0
        }
        if !isWaiting { Issue.record("the second save never waited") }
    }

    @Test(.timeLimit(.minutes(3)))
    func waitsForTheFirstThenReplaysItsCommit() async throws {
        let db = try await StoreDatabase.make("inflight_commit")
        let first = try await beginFirstSave(db)
        let second = Task { try await ModernDraftAdapter(storage: db.store).saveReportingOutcome(request) }
        try await waitForBlockedSave(db)
        try first.execute(unsafeSQL: "COMMIT")
        let result = try await second.value
        #expect(result == .replayed(SavedDraft(draftID: "d", content: request.content, revision: 2)))
        #expect(try await db.ledgerCount() == 2)
        #expect(try await db.store.draft(id: "d")?.revision == 2)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func waitsForTheFirstThenAppliesItselfWhenItAborted() async throws {
        let db = try await StoreDatabase.make("inflight_abort")
        let first = try await beginFirstSave(db)
        let second = Task { try await ModernDraftAdapter(storage: db.store).saveReportingOutcome(request) }
        try await waitForBlockedSave(db)
        try first.execute(unsafeSQL: "ROLLBACK")
        let result = try await second.value
        #expect(result == .committed(SavedDraft(draftID: "d", content: request.content, revision: 2)))
        let path = try await db.sql { connection in
            try connection.query("SELECT path FROM cutover.operation_ledger WHERE operation_id = \("edit")")[0].decode(String.self, "path")
        }
        #expect(path == "modern")
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func givesUpClearlyWhenTheFirstStaysInFlightPastTheLockTimeout() async throws {
        let db = try await StoreDatabase.make("inflight_timeout")
        let impatient = try await PostgresDraftStore(pool: db.pool, lockTimeout: .milliseconds(300), outcomeFlushInterval: nil)
        let first = try await beginFirstSave(db)
        // The first stays in flight until after the second has given up, so the second's end
        // is its own lock timeout, not the first's commit (how fast is not asserted: a loaded
        // machine decides that).
        await #expect(throws: DraftStoreError.lockTimeout) {
            try await ModernDraftAdapter(storage: impatient).save(request)
        }
        #expect(first.transactionState == .inTransaction)
        #expect(DraftStoreError.lockTimeout.description.contains("retry with the same operation ID"))
        try first.execute(unsafeSQL: "COMMIT")
        // The retry, once the first has committed, replays it.
        #expect(try await ModernDraftAdapter(storage: impatient).saveReportingOutcome(request).outcome == .replayed)
        await db.close()
    }
}
