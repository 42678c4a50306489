import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The counts of rows still to convert that the backfill runs while it works (before its first
/// batch, on a session of its own when that one runs past its timeout, and at the end of a
/// pass) run without parallel workers, which would take every core of a small server from the
/// live load and from the backfill's own batches.
@Suite("The backfill's own counts run on one process", .timeLimit(.minutes(2)))
struct BackfillCountsOnOneCoreTests {
    /// A count of the drafts still to convert that divides by zero unless parallel workers are
    /// off in its transaction. The divisor is no constant, so the planner cannot fold it first.
    static let countOnOneCore = """
        SELECT count(*) / CASE WHEN current_setting('max_parallel_workers_per_gather') = '0' THEN 1 ELSE 0 END
          FROM drafts WHERE document IS NULL
        """

    /// The built-in plan's engine with `remainingSQL` for its count.
    static func engine(remainingSQL: String, countTimeout: Duration?, batchDelay: Duration = .zero) throws -> BackfillEngine {
        var options = BackfillEngine.Options(batchSize: 10, batchDelay: batchDelay, throttle: PlanBackfillThrottle(targetBatchTime: .zero))
        options.startCountTimeout = countTimeout
        let plan = try BackfillEngineTests.engine(batchSize: 10)
        return BackfillEngine(plan: plan.plan, batchSQL: plan.batchSQL, remainingSQL: remainingSQL, splitSQL: plan.splitSQL,
                              directBatchSQL: plan.directBatchSQL, options: options)
    }

    /// The count before the first batch, with and without a timeout, and the one that ends the
    /// pass: each would divide by zero with parallel workers allowed.
    @Test(arguments: [nil, Duration.seconds(60)])
    func theCountsBeforeAndAfterThePass(timeout: Duration?) async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_counts_one_core", rows: 50, width: 3)
        let engine = try Self.engine(remainingSQL: Self.countOnOneCore, countTimeout: timeout)
        let database = db.database
        let progress = try await onThread { try engine.run(on: database.connect()) }
        #expect(progress.converted == 50 && progress.total == 50, "\(progress)")
        let plain = try await db.sql { try $0.query("SHOW max_parallel_workers_per_gather")[0].decode(String.self, at: 0) }
        #expect(plain != "0", "the setting holds for the count's transaction only")
        await db.close()
    }

    /// The count on a session of its own, started when the first one ran past its timeout: it
    /// lands while the batches convert.
    @Test func theCountOnASessionOfItsOwn() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_counts_one_core_background", rows: 50, width: 3)
        let slow = Self.countOnOneCore.replacingOccurrences(of: "FROM drafts", with: "FROM drafts, pg_sleep(0.3)")
        let engine = try Self.engine(remainingSQL: slow, countTimeout: .milliseconds(50), batchDelay: .milliseconds(200))
        let database = db.database
        let lines = Mutex<[String]>([])
        let progress = try await onThread {
            try engine.run(on: database.connect(), log: { line in lines.withLock { $0.append(line) } })
        }
        let logged = lines.withLock { $0 }
        // Counted as the batches went on: 50 less what they had converted by the count's snapshot.
        #expect(logged.contains { $0.hasPrefix("backfill: ") && $0.contains(" rows were still to convert when counted") }, "\(logged)")
        #expect(!logged.contains { $0.contains("failed") }, "\(logged)")
        #expect(progress.converted == 50, "\(progress)")
        await db.close()
    }
}
