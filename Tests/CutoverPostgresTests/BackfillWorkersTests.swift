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
    static func engine(workers: Int, batchSize: Int, batchDelay: Duration = .zero,
                       throttle: PlanBackfillThrottle = PlanBackfillThrottle(targetBatchTime: .zero)) throws -> BackfillEngine {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        #expect(step.split != nil, "a declarative plan divides its rows")
        var options = BackfillEngine.Options(batchSize: batchSize, batchDelay: batchDelay, throttle: throttle)
        options.workers = workers
        return try BackfillEngine(source, backfill: step, options: options)
    }

    /// The `application_name` of the sessions the backfill runs on: the connection it is
    /// given, and the workers' sessions, which open like it.
    static let backfillApplication = "audited-backfill"

    /// A connection for the backfill, which the audit tells apart from the application's.
    static func backfillSession(_ db: StoreDatabase) throws -> PostgresConnection {
        try db.database.connect(applicationName: backfillApplication)
    }

    /// A table of `rows` v1-only drafts after expand, which records every update of a row in
    /// `draft_writes`: its key, whether a session of the backfill made it, whether the row had
    /// its document before and after, and the session and start of the transaction that made it
    /// (a backfill batch's). The trigger runs AFTER the update, so that it sees the row as stored,
    /// whatever the plan's BEFORE trigger (`cutover_sync`) filled in.
    static func auditedTable(_ label: String, rows: Int) async throws -> StoreDatabase {
        let db = try await BackfillEngineTests.expandedTable(label, rows: rows, width: 3)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE draft_writes (id text NOT NULL, by_backfill boolean NOT NULL, had_document boolean NOT NULL,
                                           has_document boolean NOT NULL, pid int NOT NULL DEFAULT pg_backend_pid(),
                                           transaction_began timestamptz NOT NULL DEFAULT now());
                CREATE FUNCTION record_draft_write() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO draft_writes
                    VALUES (NEW.id, current_setting('application_name') = '\(backfillApplication)', OLD.document IS NOT NULL,
                            NEW.document IS NOT NULL);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER draft_write AFTER UPDATE ON drafts FOR EACH ROW EXECUTE FUNCTION record_draft_write();
                """)
        }
        return db
    }

    /// What the audit of an `auditedTable` saw.
    struct Audit: Equatable, CustomStringConvertible {
        /// Rows the backfill converted (their document went from NULL to a value in its update).
        var byBackfill: Int64
        /// Rows the application's writes converted.
        var byApplication: Int64
        /// Rows converted more than once, by anyone.
        var convertedAgain: Int64
        /// Updates the backfill made.
        var backfillWrites: Int64
        /// Updates the backfill made to a row that already had its document.
        var backfillWritesOfConvertedRows: Int64

        var description: String {
            "by backfill \(byBackfill), by application \(byApplication), converted again \(convertedAgain), "
                + "backfill writes \(backfillWrites), of converted rows \(backfillWritesOfConvertedRows)"
        }
    }

    static func audit(_ db: StoreDatabase) async throws -> Audit {
        try await db.sql { connection in
            let row = try connection.query("""
                WITH conversions AS (
                    SELECT id, count(*) FILTER (WHERE by_backfill) AS by_backfill, count(*) FILTER (WHERE NOT by_backfill) AS by_application
                      FROM draft_writes WHERE NOT had_document AND has_document GROUP BY id
                )
                SELECT (SELECT count(*) FROM conversions WHERE by_backfill > 0) AS by_backfill,
                       (SELECT count(*) FROM conversions WHERE by_application > 0) AS by_application,
                       (SELECT count(*) FROM conversions WHERE by_backfill + by_application > 1) AS converted_again,
                       (SELECT count(*) FROM draft_writes WHERE by_backfill) AS backfill_writes,
                       (SELECT count(*) FROM draft_writes WHERE by_backfill AND had_document) AS backfill_writes_of_converted_rows
                """)[0]
            return Audit(byBackfill: try row.decode(Int64.self, "by_backfill"), byApplication: try row.decode(Int64.self, "by_application"),
                         convertedAgain: try row.decode(Int64.self, "converted_again"),
                         backfillWrites: try row.decode(Int64.self, "backfill_writes"),
                         backfillWritesOfConvertedRows: try row.decode(Int64.self, "backfill_writes_of_converted_rows"))
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
            progress = try await onThread { try engine.run(on: Self.backfillSession(db)) }
        } catch {
            done.store(true, ordering: .relaxed)
            _ = try? await writers.value
            throw error
        }
        done.store(true, ordering: .relaxed)
        let writes = try await writers.value
        #expect(writes > 0)

        #expect(progress.workers == 4)
        // Every row converted exactly once: by the backfill, or by the application before the
        // backfill reached it; and no update of the backfill wrote a row twice or a row the
        // application had converted.
        let audit = try await Self.audit(db)
        #expect(audit.byBackfill == progress.converted && audit.byBackfill + audit.byApplication == 400, "\(audit); \(progress)")
        #expect(audit.convertedAgain == 0, "\(audit)")
        #expect(audit.backfillWrites == audit.byBackfill && audit.backfillWritesOfConvertedRows == 0, "\(audit)")
        // The writers began first; they also converted rows while the backfill ran.
        let state = try await db.sql { try MigrationState.load(plan: "drafts", on: $0) }
        let initial = try #require(state?.backfillInitialRemaining)
        #expect(progress.convertedByApplication > 0 && progress.converted + progress.convertedByApplication == initial,
                "\(progress), initial \(initial)")
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
        #expect(check[0..<4] == [0, 0, 4, 4] && check[5] == progress.converted,
                "left, titles differing, ranges, done, workers, converted: \(check)")
        // Each range was taken by one of the workers' sessions, and two sessions or more took them. A
        // worker that finishes its range takes the next one left, so on a slow machine a worker
        // still opening its session may find none left: four sessions is not a promise.
        #expect((2...4).contains(check[4]), "ranges were converted by \(check[4]) sessions")
        await db.close()
    }

    @Test func aKilledWorkerLeavesItsRangeToTheNextRunAndTheOthersFinishTheirs() async throws {
        let db = try await Self.auditedTable("backfill_workers_killed", rows: 400)
        // Batches of 5 rows 50 ms apart: each range of about 100 rows takes a second or more.
        let engine = try Self.engine(workers: 4, batchSize: 5, batchDelay: .milliseconds(50))
        let run = Task { try await onThread { try engine.run(on: Self.backfillSession(db)) } }
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
        let partly = try await Self.audit(db)
        #expect(partly.byBackfill < 400 && partly == Audit(byBackfill: partly.byBackfill, byApplication: 0, convertedAgain: 0,
                                                           backfillWrites: partly.byBackfill, backfillWritesOfConvertedRows: 0),
                "the killed worker's batch in flight rolled back: \(partly)")

        let notices = Mutex<[String]>([])
        let rerun = try await onThread {
            try Self.engine(workers: 2, batchSize: 50).run(on: Self.backfillSession(db), log: { line in notices.withLock { $0.append(line) } })
        }
        #expect(notices.withLock { $0 }.contains("backfill: going on with 1 of the 4 key ranges an earlier run began, each from its cursor"),
                "\(notices.withLock { $0 })")
        #expect(rerun.converted == 400 && rerun.convertedBefore == partly.byBackfill, "\(rerun)")
        let audit = try await Self.audit(db)
        #expect(audit == Audit(byBackfill: 400, byApplication: 0, convertedAgain: 0, backfillWrites: 400, backfillWritesOfConvertedRows: 0),
                "every row converted once by the two runs together: \(audit)")
        let left = try await db.sql { try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n") }
        #expect(left == 0)
        await db.close()
    }

    @Test func aSingleWorkerWalksTheTableWithoutRangesAndAPlanOfSQLFilesHasNone() async throws {
        let db = try await Self.auditedTable("backfill_workers_single", rows: 30)
        let progress = try await onThread { try Self.engine(workers: 1, batchSize: 7).run(on: Self.backfillSession(db)) }
        #expect(progress.converted == 30 && progress.workers == 1)
        let ranges = try await db.sql { try $0.query("SELECT count(*) AS n FROM cutover.backfill_ranges")[0].decode(Int64.self, "n") }
        #expect(ranges == 0)
        let audit = try await Self.audit(db)
        #expect(audit == Audit(byBackfill: 30, byApplication: 0, convertedAgain: 0, backfillWrites: 30, backfillWritesOfConvertedRows: 0),
                "\(audit)")
        await db.close()

        let format1 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1")
        let handWritten = try PlanSource.folder(format1.path)
        #expect(try #require(handWritten.plan.step(.backfill)?.backfill).split == nil)
    }
}
