import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// A backfill of several workers over disjoint key ranges, against real tables written by an
/// old and a new application at the same time.
@Suite("Backfill workers", .timeLimit(.minutes(3)))
struct BackfillWorkersTests {
    /// The built-in plan's engine with its range statement, in fixed batches.
    static func engine(workers: Int, batchSize: Int, batchDelay: Duration = .zero) throws -> BackfillEngine {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        #expect(step.split != nil, "a declarative plan divides its rows")
        var options = BackfillEngine.Options(batchSize: batchSize, batchDelay: batchDelay)
        options.workers = workers
        return try BackfillEngine(source, backfill: step, options: options)
    }

    /// A table of `rows` v1-only drafts after expand, which records every row's conversion (its
    /// document going from NULL to a value), whoever made it, in `conversions`.
    static func auditedTable(_ label: String, rows: Int) async throws -> StoreDatabase {
        let db = try await BackfillEngineTests.expandedTable(label, rows: rows, width: 3)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE conversions (id text NOT NULL);
                CREATE FUNCTION record_conversion() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO conversions VALUES (NEW.id); RETURN NULL; END $$;
                CREATE TRIGGER conversion AFTER UPDATE ON drafts FOR EACH ROW
                 WHEN (OLD.document IS NULL AND NEW.document IS NOT NULL) EXECUTE FUNCTION record_conversion();
                """)
        }
        return db
    }

    /// Rows converted, and rows converted more than once.
    static func conversions(_ db: StoreDatabase) async throws -> (rows: Int64, twice: Int64) {
        try await db.sql { connection in
            let row = try connection.query("""
                SELECT count(DISTINCT id) AS rows, count(*) - count(DISTINCT id) AS twice FROM conversions
                """)[0]
            return (try row.decode(Int64.self, "rows"), try row.decode(Int64.self, "twice"))
        }
    }

    @Test func everyRowIsConvertedOnceByFourWorkersWhileAnOldAndANewWriterWrite() async throws {
        let db = try await Self.auditedTable("backfill_workers_writers", rows: 400)
        let engine = try Self.engine(workers: 4, batchSize: 10, batchDelay: .milliseconds(10))
        let done = Atomic(false)
        // The old application edits titles with plain SQL (the expand trigger converts the
        // row); the new one writes documents. Both pick rows at random until the backfill ends.
        let writers = Task {
            try await onThread { () -> Int in
                let connection = try db.database.connect()
                var writes = 0
                while !done.load(ordering: .relaxed) {
                    let id = "draft-" + String(format: "%03d", Int.random(in: 1...400))
                    if writes.isMultiple(of: 2) {
                        try connection.query("UPDATE drafts SET title = title || '+', revision = revision + 1 WHERE id = \(id)")
                    } else {
                        try connection.query("""
                            UPDATE drafts SET document = jsonb_build_object('body', 'new', 'tags', '[]'::jsonb, 'title', title, 'version', 2),
                                              revision = revision + 1
                             WHERE id = \(id) AND document IS NULL
                            """)
                    }
                    writes += 1
                }
                return writes
            }
        }
        let progress: BackfillEngine.Progress
        do {
            progress = try await onThread { try engine.run(on: db.database.connect()) }
        } catch {
            done.store(true, ordering: .relaxed)
            _ = try? await writers.value
            throw error
        }
        done.store(true, ordering: .relaxed)
        let writes = try await writers.value
        #expect(writes > 0)

        #expect(progress.workers == 4)
        // The writers began first: the rows they converted before the backfill began are neither's.
        let initial = try #require(try await db.sql { try MigrationState.load(plan: "drafts", on: $0) }?.backfillInitialRemaining)
        #expect(initial <= 400 && progress.converted + progress.convertedByApplication == initial, "\(progress), initial \(initial)")
        let (rows, twice) = try await Self.conversions(db)
        #expect(rows == 400 && twice == 0)
        let check = try await db.sql { connection in
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM drafts WHERE document IS NULL) AS left,
                       (SELECT count(*) FROM drafts WHERE document ->> 'title' IS DISTINCT FROM title) AS differing,
                       (SELECT count(*) FROM cutover.backfill_ranges WHERE plan = 'drafts') AS ranges,
                       (SELECT count(*) FROM cutover.backfill_ranges WHERE plan = 'drafts' AND is_done) AS done,
                       (SELECT count(DISTINCT worker_pid) FROM cutover.backfill_ranges WHERE plan = 'drafts') AS workers,
                       (SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts') AS converted
                """)[0]
            return try ["left", "differing", "ranges", "done", "workers", "converted"].map { try row.decode(Int64.self, $0) }
        }
        #expect(check == [0, 0, 4, 4, 4, progress.converted], "left, titles differing, ranges, done, workers, converted: \(check)")
        await db.close()
    }

    @Test func aKilledWorkerLeavesItsRangeToTheNextRunAndTheOthersFinishTheirs() async throws {
        let db = try await Self.auditedTable("backfill_workers_killed", rows: 400)
        // Batches of 5 rows 50 ms apart: each range of about 100 rows takes a second or more.
        let engine = try Self.engine(workers: 4, batchSize: 5, batchDelay: .milliseconds(50))
        let run = Task { try await onThread { try engine.run(on: db.database.connect()) } }
        let victim = try await db.sql { connection -> Int32 in
            while true {
                let rows = try connection.query("""
                    SELECT worker_pid FROM cutover.backfill_ranges
                     WHERE plan = 'drafts' AND worker_pid IS NOT NULL AND converted > 0 AND NOT is_done ORDER BY range_no
                    """)
                if rows.count == 4 { return try rows[2].decode(Int32.self, "worker_pid") }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        _ = try await db.sql { try $0.query("SELECT pg_terminate_backend(\(victim))") }
        let failure = await run.result
        guard case .failure(let error) = failure else {
            Issue.record("the run went on without the killed worker's range")
            await db.close()
            return
        }
        #expect(error is PostgresError, "\(error)")
        let ranges = try await db.sql { connection in
            try connection.query("SELECT worker_pid, is_done, cursor_key FROM cutover.backfill_ranges WHERE plan = 'drafts' ORDER BY range_no")
                .map { (try $0.decode(Int32.self, "worker_pid"), try $0.decode(Bool.self, "is_done"), try $0.decode(String?.self, "cursor_key")) }
        }
        #expect(ranges.map(\.1) == [true, true, false, true], "the other workers finish their ranges")
        #expect(ranges[2].0 == victim && ranges[2].2 != nil, "the killed worker's range keeps its cursor")
        let (partly, twice) = try await Self.conversions(db)
        #expect(partly < 400 && twice == 0)

        let notices = Mutex<[String]>([])
        let rerun = try await onThread {
            try Self.engine(workers: 2, batchSize: 50).run(on: db.database.connect(), log: { line in notices.withLock { $0.append(line) } })
        }
        #expect(notices.withLock { $0 }.contains("backfill: going on with 1 of the 4 key ranges an earlier run began, each from its cursor"),
                "\(notices.withLock { $0 })")
        #expect(rerun.converted == 400 && rerun.convertedBefore == partly, "\(rerun)")
        let (rows, again) = try await Self.conversions(db)
        #expect(rows == 400 && again == 0)
        #expect(try await db.sql { try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n") } == 0)
        await db.close()
    }

    @Test func aSingleWorkerWalksTheTableWithoutRangesAndAPlanOfSQLFilesHasNone() async throws {
        let db = try await Self.auditedTable("backfill_workers_single", rows: 30)
        let progress = try await onThread { try Self.engine(workers: 1, batchSize: 7).run(on: db.database.connect()) }
        #expect(progress.converted == 30 && progress.workers == 1)
        #expect(try await db.sql { try $0.query("SELECT count(*) AS n FROM cutover.backfill_ranges")[0].decode(Int64.self, "n") } == 0)
        #expect(try await Self.conversions(db) == (30, 0))
        await db.close()

        let format1 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1")
        let handWritten = try PlanSource.folder(format1.path)
        #expect(try #require(handWritten.plan.step(.backfill)?.backfill).split == nil)
    }
}
