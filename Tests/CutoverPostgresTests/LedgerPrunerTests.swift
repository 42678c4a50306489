import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Ledger retention")
struct LedgerPrunerTests {
    /// Inserts ledger entries committed `age` ago.
    private func insertEntries(_ db: StoreDatabase, prefix: String, count: Int, age: String) async throws {
        try await db.sql { connection in
            try connection.query("""
                INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path, committed_at)
                SELECT 'tenant', \(prefix) || n, sha256(n::text::bytea), 'draft', 1, 'legacy', now() - \(age)::interval
                  FROM generate_series(1, \(count)) AS n
                """)
        }
    }

    private func count(_ db: StoreDatabase, prefix: String) async throws -> Int {
        try await db.sql { connection in
            try connection.query("SELECT count(*) AS n FROM cutover.operation_ledger WHERE operation_id LIKE \(prefix + "%")")[0]
                .decode(Int.self, "n")
        }
    }

    @Test func removesOnlyExpiredEntriesInBatches() async throws {
        let db = try await StoreDatabase.make("prune_batches")
        try await insertEntries(db, prefix: "old-", count: 35, age: "8 days")
        try await insertEntries(db, prefix: "recent-", count: 12, age: "6 days")
        try await insertEntries(db, prefix: "fresh-", count: 5, age: "1 minute")
        let report = try await LedgerPruner(pool: db.pool, batchSize: 10).prune()
        #expect(report == LedgerPruner.Report(deleted: 35, batches: 4, isComplete: true))
        #expect(try await count(db, prefix: "old-") == 0)
        #expect(try await count(db, prefix: "recent-") == 12)
        #expect(try await count(db, prefix: "fresh-") == 5)
        let shorter = try await LedgerPruner(pool: db.pool, batchSize: 10).prune(olderThan: .seconds(2 * 24 * 3600))
        #expect(shorter.deleted == 12)
        await db.close()
    }

    @Test func anInterruptedPruneResumes() async throws {
        let db = try await StoreDatabase.make("prune_resume")
        try await insertEntries(db, prefix: "old-", count: 25, age: "30 days")
        let pruner = LedgerPruner(pool: db.pool, batchSize: 10)
        let first = try await pruner.prune(maximumBatches: 1)
        #expect(first == LedgerPruner.Report(deleted: 10, batches: 1, isComplete: false))
        let rest = try await pruner.prune()
        #expect(rest == LedgerPruner.Report(deleted: 15, batches: 2, isComplete: true))
        #expect(try await count(db, prefix: "old-") == 0)
        await db.close()
    }

    @Test func aRetentionUnderADayIsRefused() async throws {
        let db = try await StoreDatabase.make("prune_refused")
        try await insertEntries(db, prefix: "old-", count: 3, age: "2 days")
        await #expect(throws: LedgerPruneError.retentionTooShort(.seconds(3600))) {
            try await LedgerPruner(pool: db.pool).prune(olderThan: .seconds(3600))
        }
        // Beyond the bound the server would be asked for a timestamp out of its range.
        let tooLong = LedgerPruner.maximumRetention + .seconds(1)
        await #expect(throws: LedgerPruneError.retentionTooLong(tooLong)) {
            try await LedgerPruner(pool: db.pool).prune(olderThan: tooLong)
        }
        #expect(try await count(db, prefix: "old-") == 3)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func savesReusingPrunedIDsNeverWaitLongerThanABatch() async throws {
        let db = try await StoreDatabase.make("prune_concurrent", poolSize: 4)
        try await insertEntries(db, prefix: "op-", count: 20_000, age: "10 days")
        // A store whose saves give up after 500 ms of waiting for a lock: a prune that held
        // expired rows for longer (one big DELETE) would make these saves fail.
        let impatient = try await PostgresDraftStore(pool: db.pool, lockTimeout: .milliseconds(500), outcomeFlushInterval: nil)
        let writer = ModernDraftAdapter(storage: impatient)
        let pruning = Task { try await LedgerPruner(pool: db.pool, batchSize: 500).prune() }
        var saved = 0
        var replayedOld = 0
        for index in stride(from: 1, through: 20_000, by: 400) {
            let save = SaveDraft(operationScope: "tenant", operationID: "op-\(index)", draftID: "draft-\(index)",
                                 expectedRevision: 0, content: DraftContent(title: "new use of an expired ID"))
            do {
                _ = try await writer.save(save)
                saved += 1
            } catch SaveFailure.operationConflict {
                replayedOld += 1 // not pruned yet: the expired entry still answers, as documented
            }
        }
        let report = try await pruning.value
        #expect(report.isComplete)
        #expect(report.batches >= 40)
        #expect(saved + replayedOld == 50)
        #expect(try await count(db, prefix: "op-") == saved)
        await db.close()
    }
}
