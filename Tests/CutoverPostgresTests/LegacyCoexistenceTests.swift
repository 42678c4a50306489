import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

@Suite("The store beside a legacy application")
struct LegacyCoexistenceTests {
    /// What one writer saw: saves applied and conflicts reported.
    final class Tally: Sendable {
        private let counts = Mutex((applied: 0, conflicts: 0))
        func applied() { counts.withLock { $0.applied += 1 } }
        func conflict() { counts.withLock { $0.conflicts += 1 } }
        var value: (applied: Int, conflicts: Int) { counts.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(3)), arguments: [StoreDatabase.Layout.baseline, .expanded])
    func concurrentPlainSQLAndStoreSavesLoseNoUpdate(layout: StoreDatabase.Layout) async throws {
        let db = try await StoreDatabase.make("legacy_coexist", layout: layout, poolSize: 4)
        let drafts = (0..<2).map { "shared-\($0)" }
        for id in drafts {
            try await db.sql { try $0.query("INSERT INTO drafts (id, title, revision) VALUES (\(id), \("start"), \(Int64(1)))") }
        }
        let legacyApp = Tally()
        let storeSide = Tally()
        let rounds = 60
        // The old application: read the revision, then its conditional UPDATE, with plain SQL.
        let oldApp = Task {
            let connection = try db.database.connect(applicationName: "legacy-app")
            for round in 0..<rounds {
                let id = drafts[round % drafts.count]
                let revision = try connection.query("SELECT revision FROM drafts WHERE id = \(id)")[0].decode(Int64.self, "revision")
                let updated = try connection.query("""
                    UPDATE drafts SET title = \("old app \(round)"), revision = revision + 1 WHERE id = \(id) AND revision = \(revision)
                    """).affectedRows
                if updated == 1 { legacyApp.applied() } else { legacyApp.conflict() }
            }
        }
        // The store, through the legacy adapter (the only writer at baseline) or both.
        let legacy = LegacyDraftAdapter(storage: db.store)
        let modern = ModernDraftAdapter(storage: db.store)
        for round in 0..<rounds {
            let id = drafts[(round + 1) % drafts.count]
            let current = try #require(try await db.store.draft(id: id)).revision
            let save = SaveDraft(operationScope: "tenant", operationID: "op-\(round)", draftID: id,
                                 expectedRevision: current, content: DraftContent(title: "store \(round)", body: "kept"))
            do {
                if layout == .expanded && round.isMultiple(of: 2) { _ = try await modern.save(save) } else { _ = try await legacy.save(save) }
                storeSide.applied()
            } catch SaveFailure.conflict(let expected, let found) {
                #expect(expected == current)
                #expect(found > current)
                storeSide.conflict()
            }
        }
        try await oldApp.value
        let total = try await db.sql { connection in
            try connection.query("SELECT sum(revision - 1)::bigint AS moved FROM drafts")[0].decode(Int64.self, "moved")
        }
        // Every applied write moved exactly one revision: nothing was lost or applied twice.
        #expect(total == Int64(legacyApp.value.applied + storeSide.value.applied))
        #expect(try await db.ledgerCount() == storeSide.value.applied)
        #expect(legacyApp.value.applied + legacyApp.value.conflicts == rounds)
        if layout == .expanded {
            // Every row's v2 document agrees with the title the old application reads.
            let mismatched = try await db.sql { connection in
                try connection.query("SELECT count(*) AS n FROM drafts WHERE document ->> 'title' IS DISTINCT FROM title")[0]
                    .decode(Int.self, "n")
            }
            #expect(mismatched == 0)
        }
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)), arguments: [StoreDatabase.Layout.baseline, .expanded])
    func conflictsAreReportedBothWays(layout: StoreDatabase.Layout) async throws {
        let db = try await StoreDatabase.make("legacy_conflicts", layout: layout)
        let oldApp = try db.database.connect(applicationName: "legacy-app")
        try oldApp.query("INSERT INTO drafts (id, title, revision) VALUES (\("d"), \("start"), \(Int64(1)))")
        let writer = LegacyDraftAdapter(storage: db.store)

        // The store read revision 1; the old application writes first: the store's save conflicts.
        try oldApp.query("UPDATE drafts SET title = \("old app"), revision = revision + 1 WHERE id = \("d") AND revision = \(Int64(1))")
        let stale = SaveDraft(operationScope: "t", operationID: "stale", draftID: "d", expectedRevision: 1,
                              content: DraftContent(title: "store"))
        await #expect(throws: SaveFailure.conflict(expected: 1, current: 2)) { try await writer.save(stale) }

        // The old application read revision 2; the store writes first: its UPDATE changes no row.
        let fresh = SaveDraft(operationScope: "t", operationID: "fresh", draftID: "d", expectedRevision: 2,
                              content: DraftContent(title: "store"))
        #expect(try await writer.save(fresh).revision == 3)
        let updated = try oldApp.query("UPDATE drafts SET title = \("old app again"), revision = revision + 1 WHERE id = \("d") AND revision = \(Int64(2))")
        #expect(updated.affectedRows == 0)
        let title = try oldApp.query("SELECT title FROM drafts WHERE id = \("d")")[0].decode(String.self, "title")
        #expect(title == "store")
        #expect(try await db.ledgerCount() == 1)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func theModernWriterIsRefusedBeforeExpandAndTheLegacyOneWorks() async throws {
        let db = try await StoreDatabase.make("legacy_baseline", layout: .baseline)
        let create = SaveDraft(operationScope: "t", operationID: "create", draftID: "d", expectedRevision: 0,
                               content: DraftContent(title: "Plan"))
        await #expect {
            try await ModernDraftAdapter(storage: db.store).save(create)
        } throws: { error in
            "\(error)" == "save refused: the modern format is not stored yet (run expand first); save through the legacy writer"
        }
        #expect(try await db.ledgerCount() == 0)
        let saved = try await LegacyDraftAdapter(storage: db.store).save(create)
        #expect(saved.revision == 1)
        #expect(try await db.store.read(id: "d")?.content == DraftContent(title: "Plan"))
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func awkwardTitlesRoundTripAndLimitsAreEnforced() async throws {
        let db = try await StoreDatabase.make("store_titles")
        let titles = ["it's \"quoted\"", "back\\slash \\x00 \\\\", "$1 $2; DROP TABLE drafts; --", "emoji 👩‍👩‍👧 and é (e\u{301})",
                      String(repeating: "x", count: SaveLimits.maximumTitleLength)]
        for (index, title) in titles.enumerated() {
            for path in SavePath.allCases {
                let id = "title-\(index)-\(path)"
                let save = SaveDraft(operationScope: "t", operationID: id, draftID: id, expectedRevision: 0,
                                     content: DraftContent(title: title, body: "body \(title)", tags: [title.isEmpty ? "x" : "tag"]))
                let writer: any DraftWriting = path == .legacy ? LegacyDraftAdapter(storage: db.store) : ModernDraftAdapter(storage: db.store)
                _ = try await writer.save(save)
                let stored = try #require(try await db.store.read(id: id))
                #expect(stored.content.title == title)
                let legacyView = try await db.sql { try $0.query("SELECT title FROM drafts WHERE id = \(id)")[0].decode(String.self, "title") }
                #expect(legacyView == title)
            }
        }
        let tooLong = String(repeating: "y", count: 10_000)
        for title in [tooLong, "nul\u{0}inside"] {
            let save = SaveDraft(operationScope: "t", operationID: "bad", draftID: "bad", expectedRevision: 0,
                                 content: DraftContent(title: title))
            await #expect {
                try await ModernDraftAdapter(storage: db.store).save(save)
            } throws: { error in
                (error as? SaveFailure)?.outcome == .invalid
            }
        }
        #expect(try await db.store.draft(id: "bad") == nil)
        await db.close()
    }
}
