import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Dispatch
import Foundation
import PostgresClient
import Testing

/// The compiled plan's direct batch: one UPDATE over the batch's keys that waits, briefly, for a
/// row another transaction holds, and gives way to the skipping batch when that wait runs out.
@Suite("Backfill direct batch", .timeLimit(.minutes(3)))
struct BackfillDirectBatchTests {
    /// The built-in plan's engine in fixed batches of `batchSize` keys, its direct batch waiting
    /// at most `rowLockWait` for a lock.
    static func engine(batchSize: Int, rowLockWait: Duration) throws -> BackfillEngine {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        var options = BackfillEngine.Options(batchSize: batchSize, throttle: PlanBackfillThrottle(targetBatchTime: .zero))
        options.rowLockWait = rowLockWait
        let engine = try BackfillEngine(source, backfill: step, options: options)
        #expect(engine.directBatchSQL != nil)
        return engine
    }

    /// What a wait for an event never seen throws.
    struct NeverSeen: Error, CustomStringConvertible {
        let description: String
    }

    /// Waits, at most a minute, until a session of this test's database running a statement that
    /// contains `text` waits for a lock (the other tests of the suite run the same batch in
    /// databases of their own, at the same time).
    static func waitUntilWaitingForALock(running text: String, in db: StoreDatabase) async throws {
        for _ in 0..<6_000 {
            let waiting = try await db.sql { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, \(text)) > 0
                       AND pid <> pg_backend_pid()
                    """)[0].decode(Int64.self, "n")
            }
            if waiting > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw NeverSeen(description: "no session running \(text) waited for a lock")
    }

    /// The direct batch's own words.
    static let directBatch = "Backfill, one batch, updating its rows directly"

    /// A row held when the batch reaches it is waited for, not skipped: once its holder commits,
    /// the same batch converts it with the rest, and the backfill ends after one pass without
    /// the skipping batch. The skipping batch alone would have skipped it and needed a second
    /// pass.
    @Test func aRowHeldWhileTheBatchWaitsIsConvertedInTheSamePass() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_direct_waits", rows: 100, width: 3)
        let holder = try db.database.connect()
        try holder.execute(unsafeSQL: "BEGIN")
        try holder.query("SELECT 1 FROM drafts WHERE id = 'draft-050' FOR UPDATE")
        let engine = try Self.engine(batchSize: 1_000, rowLockWait: .seconds(60))
        let database = db.database
        let running = Task { try await onThread { try engine.run(on: database.connect()) } }
        try await Self.waitUntilWaitingForALock(running: Self.directBatch, in: db)
        try holder.execute(unsafeSQL: "COMMIT")
        let progress = try await running.value
        #expect(progress.pass == 1 && progress.converted == 100, "\(progress)")
        #expect(engine.directBatches.waitsRunOut == 0)
        let left = try await db.sql { try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n") }
        #expect(left == 0)
        withExtendedLifetime(holder) {}
        await db.close()
    }

    /// A row held longer than the wait: the direct batch's transaction is rolled back, the
    /// skipping batch converts the same keys but that row, and the pass after converts it once
    /// its holder has let go. Every row is converted once: the count says 200, not 200 and the
    /// rows of the batch rolled back.
    @Test func aRowHeldPastTheWaitIsSkippedAndConvertedOnTheNextPass() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_direct_gives_way", rows: 200, width: 3)
        let engine = try Self.engine(batchSize: 10, rowLockWait: .milliseconds(20))
        let progress = try await BackfillPassesTests.run(engine, holding: "draft-105", in: db)
        // 20 batches of 10 keys and the empty one that ends the first pass; then 2.
        #expect(progress.pass == 2 && progress.batches == 23 && progress.converted == 200, "\(progress)")
        #expect(engine.directBatches.waitsRunOut == 1)
        await db.close()
    }

    /// The application's transaction holds a row ahead of the batch, then asks for one the batch
    /// has updated: each waits for the other. The batch waits at most half the deadlock timeout
    /// (20 s here) however long its wait was set to (two minutes here), so its wait runs out
    /// first: the batch is rolled back, and the application's transaction goes on and commits,
    /// with no deadlock error; the backfill then converts every row. Waiting the whole two
    /// minutes, it would have left the server to break the cycle after 20 s by failing one of
    /// the two.
    ///
    /// The cycle forms only if the application asks for the row before the batch's wait runs
    /// out. So that no slow poll can miss it, the application's UPDATE itself asks whether the
    /// batch is waiting, in the statement that then waits for the row: updating one row proves
    /// both waited at once.
    @Test func theApplicationNeverLosesADeadlockToTheBatch() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_direct_deadlock", rows: 100, width: 3)
        try await db.sql { try $0.execute(unsafeSQL: "ALTER DATABASE \(db.database.name) SET deadlock_timeout = '20s'") }
        let database = db.database
        let holds = DispatchSemaphore(value: 0)
        let goOn = DispatchSemaphore(value: 0)
        let application = Task {
            try await onThread { () throws -> Int? in
                let session = try database.connect()
                try session.execute(unsafeSQL: "BEGIN")
                try session.query("SELECT 1 FROM drafts WHERE id = 'draft-080' FOR UPDATE")
                holds.signal()
                goOn.wait()
                // draft-010 comes before draft-080 in key order: the batch holds it, updated. The
                // condition is read once, before the row is reached: if the batch still waits
                // then, this statement waits for it in turn; if it no longer does, nothing is
                // updated and the test says so.
                let updated = try session.query("""
                    UPDATE drafts SET title = 'Mine'
                     WHERE id = 'draft-010'
                       AND EXISTS (SELECT FROM pg_catalog.pg_stat_activity
                                    WHERE datname = current_database() AND wait_event_type = 'Lock'
                                      AND strpos(query, \(Self.directBatch)) > 0)
                    """).affectedRows
                try session.execute(unsafeSQL: "COMMIT")
                return updated
            }
        }
        try await onThread { holds.wait() }
        let engine = try Self.engine(batchSize: 1_000, rowLockWait: .seconds(120))
        let running = Task { try await onThread { try engine.run(on: database.connect()) } }
        try await Self.waitUntilWaitingForALock(running: Self.directBatch, in: db)
        goOn.signal()
        #expect(try await application.value == 1, "the batch's wait ran out before the application asked for the row: no cycle formed")
        let progress = try await running.value
        #expect(engine.directBatches.waitsRunOut == 1)
        #expect(progress.converted + progress.convertedByApplication >= 99, "\(progress)")
        let rows = try await db.sql { connection in
            try connection.query("""
                SELECT count(*) FILTER (WHERE document IS NULL) AS left, min(document->>'title') FILTER (WHERE id = 'draft-010') AS mine
                  FROM drafts
                """)[0]
        }
        #expect(try rows.decode(Int64.self, "left") == 0)
        #expect(try rows.decode(String.self, "mine") == "Mine")
        await db.close()
    }
}
