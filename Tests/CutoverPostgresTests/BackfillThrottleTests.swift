import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The batch size follows a target batch time, without a server.
@Suite("Backfill batch sizes")
struct BatchSizerTests {
    @Test func aBatchFasterThanTheTargetGrowsAndASlowerOneShrinksAtMostTwofold() {
        var sizer = BatchSizer(initial: 1000, target: .milliseconds(100))
        sizer.record(time: .milliseconds(80), endedPass: false)
        #expect(sizer.size == 1250)
        sizer.record(time: .milliseconds(10), endedPass: false)
        #expect(sizer.size == 2500, "ten times too fast: doubled, no more")
        sizer.record(time: .seconds(5), endedPass: false)
        #expect(sizer.size == 1250, "fifty times too slow: halved, no less")
        sizer.record(time: .milliseconds(200), endedPass: false)
        #expect(sizer.size == 625)
    }

    @Test func aBatchNearTheTargetOrTheLastOfAPassChangesNothing() {
        var sizer = BatchSizer(initial: 1000, target: .milliseconds(100))
        sizer.record(time: .milliseconds(95), endedPass: false)
        sizer.record(time: .milliseconds(108), endedPass: false)
        #expect(sizer.size == 1000)
        sizer.record(time: .microseconds(10), endedPass: true)
        #expect(sizer.size == 1000, "the batch that ended a pass may have found few rows")
        sizer.record(time: .zero, endedPass: false)
        #expect(sizer.size == 2000, "a batch too fast to time counts as twice as fast")
    }

    @Test func aZeroTargetKeepsTheSizeAndTheRangeBoundsIt() {
        var fixed = BatchSizer(initial: 10, target: .zero)
        fixed.record(time: .microseconds(1), endedPass: false)
        #expect(fixed.size == 10 && !fixed.isAdaptive)
        var large = BatchSizer(initial: 800_000, target: .seconds(1))
        large.record(time: .milliseconds(1), endedPass: false)
        #expect(large.size == 1_000_000)
        var small = BatchSizer(initial: 1, target: .milliseconds(1))
        small.record(time: .seconds(1), endedPass: false)
        #expect(small.size == 1)
        #expect(BatchSizer(initial: 0, target: .zero).size == 1)
    }

    @Test func theSharedSizeFollowsEveryWorkersBatchesTogetherWithoutChangingTwiceForOneCause() {
        var sizer = BatchSizer(initial: 1000, target: .milliseconds(100), window: 2)
        // Worker 1's batch of 1,000 rows took twice the target: half the size.
        sizer.record(rows: 1000, time: .milliseconds(200), endedPass: false)
        #expect(sizer.size == 500)
        // Worker 2's batch was asked for at 1,000 rows before that, and was as slow: the size
        // that meets the target is still 500, not half of it again.
        sizer.record(rows: 1000, time: .milliseconds(200), endedPass: false)
        #expect(sizer.size == 500, "a batch asked for at the old size does not halve the new one again")
        // Worker 1's next batch, of 500 rows, took 50 ms: the last two batches together did
        // 1,500 rows in 250 ms, so 600 rows take the target.
        sizer.record(rows: 500, time: .milliseconds(50), endedPass: false)
        #expect(sizer.size == 600, "the size follows both workers' last batches together")
        // A range's last batch says nothing of the time a full one takes.
        sizer.record(rows: 600, time: .microseconds(1), endedPass: true)
        #expect(sizer.size == 600)
    }
}

/// `BackfillEngine` against a real PostgreSQL: the batch size follows the target time, and the
/// throttle (an operator's query, the server's active sessions) holds batches and lets them go.
@Suite("Backfill pace and throttle", .timeLimit(.minutes(3)))
struct BackfillThrottleTests {
    /// What a backfill on its own thread said.
    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func saw(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    }

    private func run(_ engine: BackfillEngine, on configuration: PostgresConfiguration, lines: Lines)
        -> Task<Result<BackfillEngine.Progress, any Error>, Never> {
        Task {
            do {
                return .success(try await onThread {
                    try engine.run(on: PostgresConnection(configuration: configuration), log: { line in lines.lines.withLock { $0.append(line) } })
                })
            } catch {
                return .failure(error)
            }
        }
    }

    private func waitForLine(_ text: String, in lines: Lines) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while !lines.saw(text) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    private func unconverted(_ configuration: PostgresConfiguration) async throws -> Int64 {
        try await onThread {
            try PostgresConnection(configuration: configuration).query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0]
                .decode(Int64.self, "n")
        }
    }

    @Test func batchesGrowFromATinyFirstSizeTowardTheTargetTime() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_target_time", rows: 20_000, width: 5)
        let engine = try BackfillEngineTests.engine(batchSize: 10, throttle: PlanBackfillThrottle(targetBatchTime: .milliseconds(200)))
        let progress = try await onThread { try engine.run(on: db.database.connect()) }
        #expect(progress.converted == 20_000)
        // At 10 rows a batch, 2,000 batches; a batch of 10 rows takes far less than 200 ms, so
        // the size doubles batch after batch.
        #expect(progress.batches < 500, "\(progress.batches) batches")
        #expect(progress.batchSize > 10)
        #expect(try await unconverted(db.database.configuration()) == 0)
        await db.close()
    }

    @Test func aThrottleQueryHoldsEveryBatchWhileItAnswersTrue() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_throttle_query", rows: 200, width: 3)
        let configuration = db.database.configuration()
        try await db.sql { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE throttle_switch (hold boolean NOT NULL); INSERT INTO throttle_switch VALUES (true)")
        }
        let engine = try BackfillEngineTests.engine(
            batchSize: 20, throttle: PlanBackfillThrottle(targetBatchTime: .zero, throttleQuery: "SELECT hold FROM throttle_switch"))
        let lines = Lines()
        let backfill = run(engine, on: configuration, lines: lines)
        let held = try await waitForLine("backfill throttled: the throttle query answered true", in: lines)
        #expect(held, "\(lines.lines.withLock { $0 })")
        #expect(try await unconverted(configuration) == 200, "no batch ran while the query answered true")
        try await db.sql { connection in try connection.execute(unsafeSQL: "UPDATE throttle_switch SET hold = false") }
        let progress = try await backfill.value.get()
        #expect(progress.converted == 200)
        #expect(progress.throttleWaits == 1 && progress.throttled > .zero)
        #expect(progress.lastThrottleReason == "the throttle query answered true")
        #expect(try await unconverted(configuration) == 0)
        await db.close()
    }

    @Test func aThrottleQueryThatFailsBeforeTheFirstBatchStopsTheBackfillAndWritesNothing() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_throttle_broken", rows: 30)
        let engine = try BackfillEngineTests.engine(
            batchSize: 10, throttle: PlanBackfillThrottle(targetBatchTime: .zero, throttleQuery: "SELECT no_such_column FROM drafts"))
        let outcome = try await onThread { () -> String in
            do {
                try engine.run(on: db.database.connect())
                return "finished"
            } catch let error as BackfillError {
                return error.description
            }
        }
        #expect(outcome.hasPrefix("the throttle query failed before the first batch: "), "\(outcome)")
        #expect(outcome.contains("no_such_column"), "\(outcome)")
        #expect(try await unconverted(db.database.configuration()) == 30)
        await db.close()
    }

    /// On a cluster of its own: the ceiling counts the whole server's active sessions, and the
    /// shared test cluster's other tests would count too.
    @Test func moreActiveSessionsThanTheCeilingHoldTheBatchesUntilTheyEnd() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        let configuration = try await StandbyLagCeilingTests.expandedDatabase("session_ceiling", on: cluster, rows: 100)
        // Two sessions each running a statement that lasts until it is cancelled.
        let sleeperConfiguration = cluster.configuration(database: "session_ceiling", applicationName: "sleeper")
        let sleeping = (0..<2).map { _ in
            Task { try? await onThread { _ = try PostgresConnection(configuration: sleeperConfiguration).execute(unsafeSQL: "SELECT pg_sleep(120)") } }
        }
        let sleepersQuery = "FROM pg_stat_activity WHERE application_name = 'sleeper' AND state = 'active'"
        try await onThread {
            let watcher = try PostgresConnection(configuration: configuration)
            let deadline = ContinuousClock.now + .seconds(30)
            while try watcher.query(PostgresQuery(unsafeSQL: "SELECT count(*) AS n \(sleepersQuery)"))[0].decode(Int64.self, "n") < 2,
                  ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        let engine = try BackfillEngineTests.engine(batchSize: 10, throttle: PlanBackfillThrottle(targetBatchTime: .zero, maximumActiveSessions: 1))
        let lines = Lines()
        let backfill = run(engine, on: configuration, lines: lines)
        let held = try await waitForLine("active sessions, over the ceiling of 1", in: lines)
        #expect(held, "\(lines.lines.withLock { $0 })")
        #expect(try await unconverted(configuration) == 100)
        try await onThread {
            _ = try PostgresConnection(configuration: configuration).query(PostgresQuery(unsafeSQL: "SELECT pg_cancel_backend(pid) \(sleepersQuery)"))
        }
        for task in sleeping { await task.value }
        let progress = try await backfill.value.get()
        #expect(progress.converted == 100)
        #expect(progress.throttleWaits == 1)
        #expect(progress.lastThrottleReason?.hasSuffix("active sessions, over the ceiling of 1") == true, "\(String(describing: progress.lastThrottleReason))")
    }

    /// The backfill's own count of the rows still to convert, reading on a session of its own,
    /// is no active session of the load: with a ceiling of none, it does not hold the batches.
    @Test func theBackfillsOwnCountIsNoActiveSessionOfTheCeiling() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        let configuration = try await StandbyLagCeilingTests.expandedDatabase("session_ceiling_count", on: cluster, rows: 100)
        var options = BackfillEngine.Options(batchSize: 10, throttle: PlanBackfillThrottle(targetBatchTime: .zero, maximumActiveSessions: 0))
        options.startCountTimeout = .milliseconds(200)
        let built = try BackfillEngineTests.engine(batchSize: 10)
        // A count that reads for ten minutes: it times out before the first batch, goes on in the
        // background, and is cancelled when the backfill ends.
        let engine = BackfillEngine(plan: built.plan, batchSQL: built.batchSQL,
                                    remainingSQL: "SELECT count(*) FROM drafts, pg_sleep(600) WHERE document IS NULL",
                                    splitSQL: built.splitSQL, options: options)
        let lines = Lines()
        let progress = try await run(engine, on: configuration, lines: lines).value.get()
        #expect(progress.converted == 100)
        #expect(progress.throttleWaits == 0, "\(lines.lines.withLock { $0 }) \(String(describing: progress.lastThrottleReason))")
        #expect(lines.saw("counting on a session of its own"), "\(lines.lines.withLock { $0 })")
    }
}

/// An operator's pause, resume and retune (`cutover.backfill_control`) reach a running
/// `BackfillEngine` before its next batch.
@Suite("Backfill paused, resumed and retuned while it runs", .timeLimit(.minutes(3)))
struct BackfillControlTests {
    private static func start(_ engine: BackfillEngine, on configuration: PostgresConfiguration)
        -> (Task<BackfillEngine.Progress, any Error>, ObservedBackfill) {
        ObservedBackfill.start(engine) { try PostgresConnection(configuration: configuration) }
    }

    private func waitFor(_ condition: @Sendable () -> Bool) async throws -> Bool {
        try await ObservedBackfill.waitFor(condition)
    }

    @Test func aPauseHoldsTheNextBatchAResumeLetsItGoAndARetuneChangesThePaceFromTheNextBatch() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_control_run", rows: 400, width: 3)
        let configuration = db.database.configuration()
        // Fixed batches of 10 rows, 50 ms apart: 40 batches.
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        let engine = try BackfillEngine(source, backfill: step, options: .init(batchSize: 10, batchDelay: .milliseconds(50), niceRatio: 0.5))
        let (backfill, observed) = Self.start(engine, on: configuration)
        #expect(try await waitFor { (observed.latest?.converted ?? 0) >= 30 })
        let pausedAt = try await db.sql { connection -> Int64 in
            try BackfillControl.pause(plan: "drafts", osUser: "ops", on: connection)
            return try connection.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0]
                .decode(Int64.self, "backfill_converted")
        }
        #expect(try await waitFor { observed.line(containing: "backfill paused by") != nil }, "\(observed.lines.withLock { $0 })")
        let heldAt = try #require(observed.latest?.converted)
        // At most the batch in flight when the pause was written ran after it.
        #expect(heldAt >= pausedAt && heldAt <= pausedAt + 10, "paused at \(pausedAt), held at \(heldAt)")
        let pausedLine = try #require(observed.line(containing: "backfill paused by"))
        #expect(pausedLine.hasPrefix("backfill paused by ") && pausedLine.contains(" as ops at "), "\(pausedLine)")
        #expect(pausedLine.hasSuffix(", \(heldAt) of 400 rows converted: 'phase backfill --resume' lets it go on"), "\(pausedLine)")
        let stored = try await db.sql { connection in
            try connection.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0].decode(Int64.self, "backfill_converted")
        }
        #expect(stored == heldAt, "no batch ran while paused")

        // A retune while paused, then a resume: the next batch follows the new target and ratio.
        try await db.sql { connection in
            try BackfillControl.retune(plan: "drafts", targetBatchTime: .milliseconds(200), niceRatio: 0, maximumActiveSessions: nil,
                                       maximumReplicaLag: nil, osUser: "ops", on: connection)
            try BackfillControl.resume(plan: "drafts", osUser: "ops", on: connection)
        }
        let progress = try await backfill.value
        #expect(progress.converted == 400)
        #expect(progress.pausedByOperator > .zero)
        #expect(progress.targetBatchTime == .milliseconds(200) && progress.niceRatio == 0)
        #expect(progress.batchSize > 10, "the batches grew toward the new target")
        #expect(observed.line(containing: "backfill resumed by ") != nil)
        let retuned = try #require(observed.line(containing: "backfill retuned by "))
        #expect(retuned.hasSuffix(" as ops: target batch time 200ms, nice ratio 0, from this batch on"), "\(retuned)")
        // Every batch after the resume ran at the new pace: the first progress after the pause has it.
        let after = observed.progress.withLock { $0 }.first { $0.converted > heldAt }
        #expect(after?.targetBatchTime == .milliseconds(200) && after?.niceRatio == 0)
        let control = try await db.sql { try BackfillControl.read(plan: "drafts", on: $0) }
        #expect(control?.isPaused == false && control?.niceRatio == 0, "the engine only reads the control; the runner clears it when the step is done")
        await db.close()
    }

    @Test func aRetuneWhileBatchesRunChangesThePaceFromTheBatchAfterTheOneInFlight() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_control_retune", rows: 400, width: 3)
        let configuration = db.database.configuration()
        // Fixed batches of 10 rows, each followed by a rest of 30 ms and as long again as the
        // batch took: 40 batches. A long lock timeout: the retune below holds the cursor's row
        // for a moment.
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        let engine = try BackfillEngine(source, backfill: step,
                                        options: .init(batchSize: 10, batchDelay: .milliseconds(30), niceRatio: 1, lockTimeout: .seconds(30)))
        let (backfill, observed) = Self.start(engine, on: configuration)
        let hasRun = try await waitFor { (observed.latest?.converted ?? 0) >= 50 }
        #expect(hasRun)
        // This transaction holds the row every batch updates with its cursor, waits until a batch
        // is held there (it began before the retune), then writes the retune and commits: the
        // batch in flight commits after it at the old pace, and the next one reads the retune.
        let (retunedAt, hasHeldABatch) = try await db.sql { connection in
            try connection.withTransaction { connection -> (Int64, Bool) in
                let converted = try connection.query("""
                    SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts' FOR UPDATE
                    """)[0].decode(Int64.self, "backfill_converted")
                let holder = try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
                let watcher = try db.database.connect()
                let deadline = ContinuousClock.now + .seconds(30)
                var isHeld = false
                while !isHeld && ContinuousClock.now < deadline {
                    isHeld = try watcher.query("""
                        SELECT count(*) AS n FROM pg_stat_activity WHERE \(holder) = ANY (pg_blocking_pids(pid))
                        """)[0].decode(Int64.self, "n") == 1
                    if !isHeld { Thread.sleep(forTimeInterval: 0.002) }
                }
                try BackfillControl.retune(plan: "drafts", targetBatchTime: .milliseconds(200), niceRatio: 0, maximumActiveSessions: nil,
                                           maximumReplicaLag: nil, osUser: "ops", on: connection)
                return (converted, isHeld)
            }
        }
        #expect(hasHeldABatch && retunedAt < 300, "a batch in flight when the retune came, with batches left to run: \(retunedAt)")
        let hasHeard = try await waitFor { observed.latest?.niceRatio == 0 }
        #expect(hasHeard, "the running backfill hears the retune")
        let progress = try await backfill.value
        #expect(progress.converted == 400)

        let batches = observed.progress.withLock { $0 }.filter { $0.batches > 0 }
        let isOld = { (batch: BackfillEngine.Progress) in batch.niceRatio == 1 && batch.targetBatchTime == .zero && batch.batchSize == 10 }
        let isNew = { (batch: BackfillEngine.Progress) in batch.niceRatio == 0 && batch.targetBatchTime == .milliseconds(200) }
        let before = batches.filter { $0.converted <= retunedAt }
        let after = batches.filter { $0.converted > retunedAt }
        #expect(!before.isEmpty && before.allSatisfy(isOld), "\(before)")
        // Only the batch in flight ran at the old pace after the retune; every batch after it
        // runs at the new one, and its size follows the new target.
        #expect(after.count >= 3 && after.first.map(isOld) == true, "\(after)")
        #expect(after.dropFirst().allSatisfy(isNew), "one batch at the old pace after the retune, no more: \(after)")
        #expect((after.dropFirst().first?.batchSize ?? 0) > 10, "the size follows the new target from that batch: \(after)")
        // Each rest is 30 ms and the nice ratio the batch reported times the time it took.
        for (batch, next) in zip(batches, batches.dropFirst()) {
            #expect(next.paused - batch.paused == .milliseconds(30) + batch.lastBatchTime * batch.niceRatio,
                    "rest after batch \(batch.batches): \(next.paused - batch.paused), took \(batch.lastBatchTime) at ratio \(batch.niceRatio)")
        }
        let retuned = observed.lines.withLock { $0 }.filter { $0.hasPrefix("backfill retuned by ") }
        #expect(retuned.count == 1 && retuned.first?.hasSuffix(" as ops: target batch time 200ms, nice ratio 0, from this batch on") == true,
                "\(retuned)")
        await db.close()
    }
}
