import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The passes after the first: they walk again the keys of the batches that skipped rows other
/// transactions held, not the whole table, and a backfill that cannot count when it ends still
/// walks every key once in the run or the runs before it.
@Suite("Backfill passes", .timeLimit(.minutes(3)))
struct BackfillPassesTests {
    /// The built-in plan's batch, in fixed batches of `batchSize` keys, with `remainingSQL`
    /// for its count.
    static func engine(batchSize: Int, remainingSQL: String? = nil, countTimeout: Duration? = nil) throws -> BackfillEngine {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        var options = BackfillEngine.Options(batchSize: batchSize, throttle: PlanBackfillThrottle(targetBatchTime: .zero))
        options.startCountTimeout = countTimeout
        let engine = try BackfillEngine(source, backfill: step, options: options)
        return BackfillEngine(plan: engine.plan, batchSQL: engine.batchSQL, remainingSQL: remainingSQL ?? engine.remainingSQL,
                              splitSQL: engine.splitSQL, options: options)
    }

    /// A count of the rows still to convert that always takes half a second.
    static let slowCount = "SELECT count(*) FROM drafts, pg_sleep(0.5) WHERE document IS NULL"

    /// A row held when the first pass reaches it is skipped; the second pass walks the ten keys
    /// of the batch that skipped it (one batch, and an empty one that ends its span), not the
    /// 200 keys of the table, and converts it once its holder has let go.
    @Test func theSecondPassWalksTheKeysOfTheBatchThatSkippedARowNotTheTable() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_passes_span", rows: 200, width: 3)
        let progress = try await Self.run(try Self.engine(batchSize: 10), holding: "draft-105", in: db)
        // 20 batches of 10 keys and the empty one that ends the first pass; then 2.
        #expect(progress.pass == 2 && progress.batches == 23 && progress.converted == 200, "\(progress)")
        await db.close()
    }

    /// The same after four workers: the pass after them walks the ten keys of the one worker's
    /// batch that skipped the held row, not the table.
    @Test func afterWorkersTheSecondPassWalksTheKeysOfTheBatchThatSkippedARow() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_passes_workers", rows: 400, width: 3)
        let progress = try await Self.run(try BackfillWorkersTests.engine(workers: 4, batchSize: 10), holding: "draft-155", in: db)
        // Four ranges of 100 keys, each 10 batches and the empty one that ends it; then 2.
        #expect(progress.pass == 2 && progress.batches == 46 && progress.converted == 400, "\(progress)")
        await db.close()
    }

    /// Runs `engine` while another session holds the draft `id`. The holder lets go once the
    /// first pass has ended, before the second begins. Expects the first pass to say it skipped
    /// the row, and no row left.
    static func run(_ engine: BackfillEngine, holding id: String, in db: StoreDatabase) async throws -> BackfillEngine.Progress {
        let (progress, lines) = try await run(engine, holding: [id], in: db)
        #expect(lines.contains("backfill: pass 1 skipped 1 rows other transactions held; "
                               + "pass 2 walks again the keys of the batches that skipped them"), "\(lines)")
        return progress
    }

    /// Runs `engine` while other sessions hold the drafts `ids`, one each. The holder of the
    /// first lets go once pass 1 has ended, that of the second once pass 2 has, and so on, each
    /// before the next pass begins: its session ends, and the call returns once it has. Expects
    /// no row left; returns the progress and the lines the backfill logged.
    static func run(_ engine: BackfillEngine, holding ids: [String],
                    in db: StoreDatabase) async throws -> (BackfillEngine.Progress, [String]) {
        var holders: [PostgresConnection] = []
        var holderPIDs: [Int32] = []
        for id in ids {
            let holder = try db.database.connect()
            try holder.execute(unsafeSQL: "BEGIN")
            try holder.query("SELECT 1 FROM drafts WHERE id = \(id) FOR UPDATE")
            holderPIDs.append(try holder.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid"))
            holders.append(holder)
        }
        let database = db.database
        let lines = Mutex<[String]>([])
        let progress = try await onThread { [holderPIDs] in
            try engine.run(on: database.connect(), log: { line in
                lines.withLock { $0.append(line) }
                // Should this fail, the row stays held and the passes end in rowsStillLocked, which fails the test.
                for (index, pid) in holderPIDs.enumerated() where line.hasPrefix("backfill: pass \(index + 1) skipped") {
                    _ = try? database.connect().query("SELECT pg_terminate_backend(\(pid), 10000)")
                }
            })
        }
        // The holders' sessions end with these connections: not before the backfill has run.
        withExtendedLifetime(holders) {}
        let left = try await db.sql { try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n") }
        #expect(left == 0)
        return (progress, lines.withLock { $0 })
    }

    /// The fixture's hand-written `batch`, which takes no last key, made to say what it
    /// skipped: the rows still to convert among the keys it walked (up to its last key, or to
    /// the end of the table when it locked none) that it did not lock.
    static func sayingWhatItSkipped(_ batch: String) throws -> String {
        let scanned = "(SELECT count(*) FROM locked) AS scanned"
        try #require(batch.contains(scanned))
        return batch.replacingOccurrences(of: scanned, with: scanned + """
            ,
                   (SELECT count(*) FROM drafts
                     WHERE document IS NULL AND ($1::text IS NULL OR id > $1::text)
                       AND (id <= (SELECT max(id) FROM locked) OR NOT EXISTS (SELECT FROM locked))
                       AND ctid <> ALL (ARRAY(SELECT ctid FROM locked))) AS skipped
            """)
    }

    /// A hand-written batch that says what it skipped but takes no last key cannot stop at the
    /// end of a span: the pass after one that skipped rows walks the whole table once, not a
    /// span for each batch that skipped, each of which would walk on to the end of the table
    /// and count again the rows held there. The row let go after pass 1 is converted on pass 2;
    /// the one still held then is counted once, and converted on pass 3.
    @Test func aHandWrittenBatchThatSaysWhatItSkippedWalksTheWholeTableOnceOnTheNextPass() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_passes_hand_written", rows: 200, width: 3)
        let format1 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1")
        let source = try PlanSource.folder(format1.path)
        let options = BackfillEngine.Options(batchSize: 10, throttle: PlanBackfillThrottle(targetBatchTime: .zero))
        let fixture = try BackfillEngine(source, backfill: try #require(source.plan.step(.backfill)?.backfill), options: options)
        #expect(!fixture.isBatchBounded)
        let engine = BackfillEngine(plan: fixture.plan, batchSQL: try Self.sayingWhatItSkipped(fixture.batchSQL),
                                    remainingSQL: fixture.remainingSQL, options: options)
        let (progress, lines) = try await Self.run(engine, holding: ["draft-055", "draft-155"], in: db)
        let skips = lines.filter { $0.contains(" skipped ") }
        #expect(skips == ["backfill: pass 1 skipped 2 rows other transactions held; pass 2 walks the whole table again",
                          "backfill: pass 2 skipped 1 rows other transactions held; pass 3 walks the whole table again"], "\(lines)")
        // 20 batches of the 198 rows not held and the empty one that ends pass 1; then one of
        // draft-055 and the empty one that skips draft-155; then one of draft-155 and the empty one.
        #expect(progress.pass == 3 && progress.batches == 25 && progress.converted == 200, "\(progress)")
        await db.close()
    }

    /// Batches that skipped rows one after another make one span; a batch that skipped none
    /// between them makes two; a batch that does not say what it skipped makes the pass end
    /// with a count; past the most spans the next pass walks the whole table.
    @Test func theSpansOfSkippedRowsJoinWhenTheirBatchesFollowEachOther() {
        var skipped = BackfillEngine.SkippedRows()
        skipped.note(0, after: nil, through: "a")
        skipped.note(2, after: "a", through: "b")
        skipped.note(1, after: "b", through: "c")
        skipped.note(0, after: "c", through: "d")
        skipped.note(3, after: "d", through: nil)
        #expect(skipped.spans == [.init(after: "a", upper: "c"), .init(after: "d", upper: nil)] && skipped.count == 6)
        #expect(skipped.isRetried)

        var unsaid = skipped
        unsaid.note(nil, after: nil, through: "a")
        #expect(!unsaid.isCounted && !unsaid.isRetried)

        var many = BackfillEngine.SkippedRows()
        for index in 0...BackfillEngine.SkippedRows.mostSpans {
            many.note(1, after: "k\(2 * index)", through: "k\(2 * index + 1)")
        }
        many.note(1, after: "z", through: "zz")
        #expect(many.spans == [.whole] && many.count == Int64(BackfillEngine.SkippedRows.mostSpans + 2))
    }

    /// A run stopped after a batch that skipped a held row leaves its cursor past that row.
    /// The next run, whose count never finishes within its timeout, walks from the cursor to the
    /// end, skips nothing, and then walks the keys the first run walked before it ends
    /// uncounted: the row the first run skipped is converted, where ending after the first
    /// pass would have left it.
    @Test func aRunThatCannotCountWalksTheKeysAnEarlierRunWalkedBeforeItEnds() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_passes_resume", rows: 100, width: 3)
        let holder = try db.database.connect()
        try holder.execute(unsafeSQL: "BEGIN")
        try holder.query("SELECT 1 FROM drafts WHERE id = 'draft-015' FOR UPDATE")
        let batches = Atomic(0)
        let first = try Self.engine(batchSize: 10)
        let stopped = try await onThread { () -> String in
            do {
                try first.run(on: db.database.connect(), isStopRequested: { batches.load(ordering: .relaxed) >= 5 },
                              progress: { batches.store($0.batches, ordering: .relaxed) })
                return "finished"
            } catch {
                return "\(error)"
            }
        }
        #expect(stopped == BackfillError.stopped(converted: 49).description, "\(stopped)")
        try holder.execute(unsafeSQL: "ROLLBACK")

        let lines = Mutex<[String]>([])
        let second = try Self.engine(batchSize: 10, remainingSQL: Self.slowCount, countTimeout: .milliseconds(200))
        let progress = try await onThread {
            try second.run(on: db.database.connect(), log: { line in lines.withLock { $0.append(line) } })
        }
        let said = lines.withLock { $0 }
        #expect(said.contains("backfill: the rows left were not counted within 200ms (the count reads the table); pass 2 walks the keys "
                              + "an earlier run walked, whose skipped rows this run has not seen"), "\(said)")
        #expect(said.last?.hasPrefix("backfill: pass 2 converted every row still to convert that it walked; the rows left were not counted") == true,
                "\(said)")
        #expect(progress.convertedThisRun == 51 && progress.pass == 2, "\(progress)")
        let left = try await db.sql { try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n") }
        #expect(left == 0, "the row the first run skipped is converted")
        await db.close()
    }
}
