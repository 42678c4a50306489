import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

@Suite("PostgresDraftStore")
struct PostgresDraftStoreTests {
    private func request(_ operation: String, draft: String = "draft-1", expected: Int64, title: String,
                         scope: String = "account-1", body: String = "", tags: [String] = []) -> SaveDraft {
        SaveDraft(operationScope: scope, operationID: operation, draftID: draft, expectedRevision: expected,
                  content: DraftContent(title: title, body: body, tags: tags))
    }

    @Test(.timeLimit(.minutes(3)))
    func thirtyTwoConcurrentSavesOfOneOperationOverBothAdaptersCommitOnce() async throws {
        let db = try await StoreDatabase.make("store_32", poolSize: 32)
        let legacy = LegacyDraftAdapter(storage: db.store)
        let modern = ModernDraftAdapter(storage: db.store)
        _ = try await modern.save(request("create", expected: 0, title: "Plan"))
        let save = request("edit", expected: 1, title: "Plan, revised", body: "Body", tags: ["a"])
        let results = try await withThrowingTaskGroup(of: SavedDraft.self) { group in
            for index in 0..<32 {
                group.addTask { try await (index.isMultiple(of: 2) ? legacy.save(save) : modern.save(save)) }
            }
            var results: [SavedDraft] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 32)
        #expect(Set(results) == [SavedDraft(draftID: "draft-1", content: save.content, revision: 2)])
        let rows = try await db.sql { connection in
            try connection.query("SELECT count(*) AS n FROM cutover.operation_ledger WHERE operation_id = \("edit")")[0].decode(Int.self, "n")
        }
        #expect(rows == 1)
        #expect(try await db.ledgerCount() == 2)
        #expect(try await db.store.draft(id: "draft-1")?.revision == 2)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func theLegacyTitleOfAModernWriteIsTheTitleOfTheBytesWritten() async throws {
        let db = try await StoreDatabase.make("store_v2_title", poolSize: 1)
        let create = request("create", expected: 0, title: "Plan")
        _ = try await db.store.commit(create, write: DraftCodecV2().encode(create.content), path: .modern)
        // Bytes replaced after encoding: the store must read them, not trust the content they
        // were first encoded from.
        var write = DraftCodecV2().encode(DraftContent(title: "Encoded first"))
        write.bytes = DraftCodecV2().encode(DraftContent(title: "Written", body: "Body")).bytes
        let edit = request("edit", expected: 1, title: "Encoded first")
        _ = try await db.store.commit(edit, write: write, path: .modern)
        let title = try await db.sql { try $0.query("SELECT title FROM drafts WHERE id = \("draft-1")")[0].decode(String.self, "title") }
        #expect(title == "Written")
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aLostReplyToCommitIsOutcomeUnknownAndTheRetryReplays() async throws {
        let direct = try await StoreDatabase.make("store_lost_reply")
        let (proxy, proxied) = try direct.database.throughLossyProxy()
        let viaProxy = PostgresPool(configuration: .init(connectionString: proxied, connectTimeout: TestPostgres.connectTimeout),
                                    maximumConnections: 1)
        let store = try await PostgresDraftStore(pool: viaProxy, outcomeFlushInterval: nil)
        let create = request("create", expected: 0, title: "Plan")
        _ = try await store.commit(create, write: DraftCodecV2().encode(create.content), path: .modern)

        let edit = request("edit", expected: 1, title: "Plan, revised")
        proxy.loseNextReplyToCommit(ofStatementContaining: "cutover.save_")
        await #expect(throws: SaveFailure.outcomeUnknown) {
            try await store.commit(edit, write: DraftCodecV1().encode(edit.content), path: .legacy)
        }
        #expect(proxy.lostReplyCount == 1)
        // The reply was lost after the commit: the draft moved and the ledger holds the operation.
        #expect(try await direct.store.draft(id: "draft-1")?.revision == 2)

        let retried = try await store.commit(edit, write: DraftCodecV2().encode(edit.content), path: .modern)
        #expect(retried == .replayed(SavedDraft(draftID: "draft-1", content: edit.content, revision: 2)))
        #expect(try await direct.ledgerCount() == 2)
        #expect(try await direct.store.draft(id: "draft-1")?.revision == 2)
        await viaProxy.shutdown()
        proxy.stop()
        await direct.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aSaveIsOneRoundTrip() async throws {
        let direct = try await StoreDatabase.make("store_round_trip")
        let (proxy, proxied) = try direct.database.throughLossyProxy()
        let pool = PostgresPool(configuration: .init(connectionString: proxied), maximumConnections: 1)
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        let writer = ModernDraftAdapter(storage: store)
        // Warm up: connect and prepare the statement.
        _ = try await writer.save(request("create", expected: 0, title: "Plan"))
        let before = proxy.clientWriteCount
        for revision in Int64(1)...20 {
            _ = try await writer.save(request("edit-\(revision)", expected: revision, title: "Plan \(revision)"))
        }
        #expect(proxy.clientWriteCount - before == 20)
        await pool.shutdown()
        proxy.stop()
        await direct.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aBackendTerminatedBeforeCommitCommitsNothing() async throws {
        let db = try await StoreDatabase.make("store_terminated", poolSize: 2)
        let create = request("create", expected: 0, title: "Plan")
        _ = try await db.store.commit(create, write: DraftCodecV2().encode(create.content), path: .modern)
        // Hold the draft's row so that the save blocks inside its transaction, before COMMIT.
        let blocker = try db.database.connect(applicationName: "row-holder")
        try blocker.execute(unsafeSQL: "BEGIN")
        try blocker.query("SELECT 1 FROM drafts WHERE id = \("draft-1") FOR UPDATE")
        let edit = request("edit", expected: 1, title: "Plan, revised")
        let save = Task { try await db.store.commit(edit, write: DraftCodecV2().encode(edit.content), path: .modern) }
        // Wait until the save is waiting on the row lock, then terminate its backend.
        let terminated = try await eventually {
            try await db.sql { connection in
                try connection.query("""
                    SELECT count(pg_terminate_backend(pid, 5000)) AS n FROM pg_stat_activity
                    WHERE application_name = 'cutover-store-test' AND wait_event_type = 'Lock' AND datname = current_database()
                    """)[0].decode(Int.self, "n") == 1
            }
        }
        #expect(terminated)
        let outcome = await save.result
        try blocker.execute(unsafeSQL: "ROLLBACK")
        let error = try #require(outcome.failure as? PostgresError)
        #expect(error.sqlState == .adminShutdown)
        #expect(error.code == .connectionLost)
        #expect(try await db.ledgerCount() == 1)
        #expect(try await db.store.draft(id: "draft-1")?.revision == 1)
        await db.close()
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
