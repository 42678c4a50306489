import Cutover
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase status` beside a running backfill, and the history it leaves: the rows, rate, ETA,
/// pace, throttle, pause and runner, with the figures the backfill really has.
extension BackfillStopTests {
    /// A `phase backfill` of 200 rows in fixed batches of 10, held first by its throttle query
    /// (a one-row table the test flips), then by an operator's pause written while it was
    /// throttled: the batch the throttle held runs when the throttle lets go, and the pause
    /// holds the next one.
    struct HeldBackfill {
        let started: PhaseBinary.Started
        /// Rows converted when the throttle held the backfill.
        let throttledAt: Int64
        /// Rows converted when the pause held it.
        let pausedAt: Int64
        /// A stretch of time within the throttle's hold: from its line to the test letting go.
        let throttledAtLeast: Duration
        /// When the test saw the pause's line: the pause held the backfill since before then.
        let pauseSeen: ContinuousClock.Instant
    }

    /// Takes `db` through expand and the switch, with a one-row table `backfill_hold` whose
    /// `hold` is `isHolding`, and starts `phase backfill` in fixed batches of 10 rows, nice ratio 0,
    /// with that column as its throttle query and `arguments` besides.
    static func startThrottledBackfill(_ db: WorkflowDatabase, isHolding: Bool, _ arguments: [String]) async throws
        -> PhaseBinary.Started {
        try await db.sql { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE backfill_hold (hold boolean NOT NULL); INSERT INTO backfill_hold VALUES (\(isHolding))")
        }
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            let run = try await db.phase(step)
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }
        return try PhaseBinary.start(["backfill", "--batch-size", "10", "--nice-ratio", "0", "--throttle-query", "SELECT hold FROM backfill_hold"]
                                     + arguments, databaseURL: db.url)
    }

    static func heldBackfill(_ db: WorkflowDatabase) async throws -> HeldBackfill {
        let started = try await Self.startThrottledBackfill(db, isHolding: false, ["--batch-delay", "50ms"])
        _ = try await db.sql { connection -> Int64 in
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                let converted = try Self.convertedByBackfill(on: connection)
                if converted >= 30 || ContinuousClock.now > deadline { return converted }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        try await db.sql { try $0.execute(unsafeSQL: "UPDATE backfill_hold SET hold = true") }
        let isThrottled = try await waitForDiagnostic("backfill throttled: the throttle query answered true", of: started)
        let throttleSeen = ContinuousClock.now
        #expect(isThrottled)
        let throttledAt = try await db.sql { try Self.convertedByBackfill(on: $0) }

        let pause = try await db.phase("backfill", "--pause")
        #expect(pause.status == 0, "\(pause.diagnostics)")
        let released = ContinuousClock.now
        try await db.sql { try $0.execute(unsafeSQL: "UPDATE backfill_hold SET hold = false") }
        let isPaused = try await waitForDiagnostic("backfill paused by ", of: started)
        let pauseSeen = ContinuousClock.now
        #expect(isPaused)
        let pausedAt = try await db.sql { try Self.convertedByBackfill(on: $0) }
        #expect(pausedAt == throttledAt + 10, "the batch the throttle held ran, and the pause held the next")
        return HeldBackfill(started: started, throttledAt: throttledAt, pausedAt: pausedAt, throttledAtLeast: released - throttleSeen,
                            pauseSeen: pauseSeen)
    }

    /// The rows the backfill's cursor has passed, as stored with its last batch.
    static func convertedByBackfill(on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0]
            .decode(Int64.self, "backfill_converted")
    }

    /// Waits until the started process has printed `text` on stderr.
    static func waitForDiagnostic(_ text: String, of started: PhaseBinary.Started) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while try !String(contentsOf: started.diagnostics, encoding: .utf8).contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    @Test func statusShowsARunningBackfillsRowsRatePaceThrottlePauseAndRunner() async throws {
        let db = try await WorkflowDatabase.make("backfill_status_running", rows: 200)
        let held = try await Self.heldBackfill(db)
        let converted = held.pausedAt
        // The runner's session: the one server process of the database asking for the
        // backfill's control again and again while it is paused.
        let runner = try await db.sql { connection -> [Int32] in
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let pids = try connection.query("""
                    SELECT pid FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid()
                       AND query LIKE '%FROM cutover.backfill_control WHERE plan = $1%'
                    """).map { try $0.decode(Int32.self, "pid") }
                if pids.count == 1 || ContinuousClock.now > deadline { return pids }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        #expect(runner.count == 1, "\(runner)")
        // What the batch before the pause recorded in the history row of the running step.
        let recorded = try await db.sql { connection in
            let row = try connection.query("""
                SELECT (details #>> '{backfill,rowsPerSecond}')::bigint AS rate, (details #>> '{backfill,elapsedMs}')::bigint AS elapsed,
                       (details #>> '{backfill,throttledMs}')::bigint AS throttled, details #>> '{backfill,updatedAt}' AS updated_at
                  FROM cutover.phase_history WHERE plan = 'drafts' AND step = 'backfill' AND outcome = 'running'
                """)[0]
            return (rate: try row.decode(Int64.self, "rate"), elapsed: try row.decode(Int64.self, "elapsed"),
                    throttled: try row.decode(Int64.self, "throttled"), updatedAt: try row.decode(String.self, "updated_at"))
        }
        // The rate is this run's rows before that batch over the time before it.
        #expect(recorded.rate > 0 && recorded.rate == Int64((Double(converted - 10) * 1000 / Double(recorded.elapsed)).rounded()),
                "\(recorded)")
        #expect(recorded.throttled >= DurationText.milliseconds(in: held.throttledAtLeast), "\(recorded), held at least \(held.throttledAtLeast)")
        let secondsLeft = (200 - converted + recorded.rate - 1) / recorded.rate

        let status = try await db.phase("status")
        #expect(status.status == 0, "\(status.diagnostics)")
        let lines = status.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("  backfill   running"), "\(status.output)")
        #expect(lines.contains("backfill: \(converted) of 200 rows converted, \(200 - converted) still to convert"), "\(status.output)")
        let running = "backfill running: \(converted) of 200 rows converted (\(converted) in this run), \(recorded.rate) rows/s, "
            + "ETA \(DurationText.format(.seconds(secondsLeft))); batches of 10 rows (fixed), nice ratio 0; "
            + "throttled \(DurationText.format(.milliseconds(recorded.throttled))) (last: the throttle query answered true), "
            + "paused 0s, waited for standbys 0s; last batch at \(recorded.updatedAt)"
        #expect(lines.contains(running), "expected \(running)\n\(status.output)")
        let runnerLine = lines.first { $0.hasPrefix("runner at work: ") }
        #expect(runnerLine?.hasPrefix("runner at work: pid \(runner.first ?? 0) (application_name cutover-phase, role ") == true,
                "\(status.output)")
        let pauseLine = lines.first { $0.hasPrefix("backfill paused by ") }
        #expect(pauseLine?.hasSuffix(": 'phase backfill --resume' lets it go on") == true, "\(status.output)")

        let json = try await db.phase("--format", "json", "status")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let run = try #require(object["backfillRun"] as? [String: Any], "\(json.output)")
        let integers = ["converted", "convertedThisRun", "total", "batchSize", "targetBatchMs", "workers", "rowsPerSecond", "secondsLeft",
                        "throttledMs", "pausedMs", "replicaWaitedMs"].map { run[$0] as? Int }
        #expect(integers == [converted, converted, 200, 10, 0, 1, recorded.rate, secondsLeft, recorded.throttled, 0, 0].map { Int($0) as Int? },
                "\(json.output)")
        #expect((run["niceRatio"] as? NSNumber)?.doubleValue == 0 && run["lastThrottleReason"] as? String == "the throttle query answered true"
                && run["updatedAt"] as? String == recorded.updatedAt, "\(json.output)")
        #expect((object["runner"] as? String)?.hasPrefix("pid \(runner.first ?? 0) (application_name cutover-phase, ") == true, "\(json.output)")
        #expect(object["backfillPaused"] as? Bool == true, "\(json.output)")
        let stored = try await db.sql { try Self.convertedByBackfill(on: $0) }
        #expect(stored == converted, "nothing ran while status looked")

        let resumed = try await db.phase("backfill", "--resume")
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let finished = try await onThread { try PhaseBinary.finish(held.started, limit: .seconds(60)) }
        #expect(finished.status == 0, "\(finished.diagnostics)")
    }

    @Test func historyKeepsTheTimeABackfillWasThrottledAndPaused() async throws {
        let db = try await WorkflowDatabase.make("backfill_history_held", rows: 200)
        let held = try await Self.heldBackfill(db)
        let resumedAt = ContinuousClock.now
        let resumed = try await db.phase("backfill", "--resume")
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let finished = try await onThread { try PhaseBinary.finish(held.started, limit: .seconds(60)) }
        #expect(finished.status == 0, "\(finished.diagnostics)")
        // The pause held the backfill from before the test saw it until after the test resumed it.
        let pausedAtLeast = DurationText.milliseconds(in: resumedAt - held.pauseSeen)

        let json = try await db.phase("--format", "json", "history")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        let runs = entries.compactMap { $0["backfill"] as? [String: Any] }
        #expect(runs.count == 1, "\(json.output)")
        let run = try #require(runs.first)
        let throttled = try #require((run["throttledMs"] as? Int).map(Int64.init), "\(run)")
        let paused = try #require((run["pausedMs"] as? Int).map(Int64.init), "\(run)")
        #expect(throttled >= DurationText.milliseconds(in: held.throttledAtLeast) && throttled > 0,
                "throttled \(throttled) ms, held at least \(held.throttledAtLeast)")
        #expect(paused >= pausedAtLeast && paused > 0, "paused \(paused) ms, held at least \(pausedAtLeast) ms")
        // 20 batches of 10 rows and the empty one that ends the pass.
        let integers = ["batches", "convertedThisRun", "batchSize", "targetBatchMs", "replicaWaitedMs"].map { run[$0] as? Int }
        #expect(integers == [21, 200, 10, 0, 0], "\(run)")
        #expect(run["lastThrottleReason"] as? String == "the throttle query answered true", "\(run)")
        let rate = try #require(run["rowsPerSecond"] as? Int, "\(run)")

        let history = try await db.phase("history")
        let pace = "      pace: 21 batches, 200 rows converted in this run at \(rate) rows/s; batches of 10 rows (fixed), nice ratio 0; "
            + "throttled \(DurationText.format(.milliseconds(throttled))), paused \(DurationText.format(.milliseconds(paused))), "
            + "waited for standbys 0s"
        #expect(history.output.split(separator: "\n").map(String.init).contains(pace), "expected \(pace)\n\(history.output)")
    }
}

/// `phase status` while the throttle holds a backfill's first batch: the hold and its reason, at
/// once, for one worker and for several.
extension BackfillStopTests {
    @Test(arguments: [1, 3])
    func statusShowsTheThrottleHoldingTheFirstBatchWhileItHolds(workers: Int) async throws {
        let db = try await WorkflowDatabase.make("backfill_status_first_held_\(workers)", rows: 200)
        let started = try await Self.startThrottledBackfill(db, isHolding: true, ["--workers", "\(workers)"])
        let isThrottled = try await Self.waitForDiagnostic("backfill throttled: the throttle query answered true", of: started)
        #expect(isThrottled)
        // The hold is written as it begins: by the worker itself, or by the thread that reports
        // for several, a moment after.
        let reason = ": the throttle query answered true; it goes on when that is no longer so"
        var status = try await db.phase("status")
        let deadline = ContinuousClock.now + .seconds(30)
        while !status.output.contains(reason), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            status = try await db.phase("status")
        }
        #expect(status.status == 0, "\(status.diagnostics)")
        let lines = status.output.split(separator: "\n").map(String.init)
        let running = "backfill running: 0 of 200 rows converted (0 in this run), 0 rows/s" + (workers > 1 ? " on \(workers) workers" : "")
            + "; batches of 10 rows (fixed), nice ratio 0; throttled 0s, paused 0s, waited for standbys 0s; no batch yet"
        #expect(lines.contains(running), "expected \(running)\n\(status.output)")
        let held = lines.first { $0.hasPrefix("backfill held since ") }
        #expect(held?.hasSuffix(reason) == true, "\(status.output)")

        let json = try await db.phase("--format", "json", "status")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let run = try #require(object["backfillRun"] as? [String: Any], "\(json.output)")
        let since = try #require(run["heldSince"] as? String, "\(json.output)")
        #expect(held == "backfill held since \(since)" + reason, "\(status.output)\n\(json.output)")
        #expect(run["holdReason"] as? String == "the throttle query answered true" && run["batches"] as? Int == 0, "\(json.output)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NOT NULL") == 0, "no batch ran while held")

        try await db.sql { try $0.execute(unsafeSQL: "UPDATE backfill_hold SET hold = false") }
        let finished = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(finished.status == 0, "\(finished.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        // The history keeps what held it, and nothing holds it any more.
        let history = try await db.phase("--format", "json", "history")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.output.utf8)) as? [[String: Any]])
        let entry = try #require(entries.first { $0["backfill"] is [String: Any] }, "\(history.output)")
        let recorded = try #require(entry["backfill"] as? [String: Any])
        #expect(recorded["lastThrottleReason"] as? String == "the throttle query answered true" && recorded["holdReason"] is NSNull
                && recorded["heldSince"] is NSNull, "\(history.output)")
        let throttledMs = try #require(recorded["throttledMs"] as? Int, "\(history.output)")
        let durationMs = try #require(entry["durationMs"] as? Int, "\(history.output)")
        #expect(throttledMs > 0 && throttledMs <= durationMs, "held once for the whole: \(throttledMs) ms of \(durationMs) ms")
    }
}
