import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Several workers at one pace: a throttle holds all of them and lets all of them go.
extension BackfillWorkersTests {
    @Test func whileTheThrottleHoldsNoWorkerStartsABatchAndEveryOneGoesOnWhenItLetsGo() async throws {
        let workers = 4
        let db = try await Self.auditedTable("backfill_workers_throttled", rows: 400)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE throttle_switch (hold boolean NOT NULL); INSERT INTO throttle_switch VALUES (false)")
        }
        // Batches of 5 rows, each worker resting 20 ms after each of its own: 80 batches.
        let engine = try Self.engine(workers: workers, batchSize: 5, batchDelay: .milliseconds(20),
                                     throttle: PlanBackfillThrottle(targetBatchTime: .zero, throttleQuery: "SELECT hold FROM throttle_switch"))
        let clock = ContinuousClock()
        let started = clock.now
        let (backfill, observed) = ObservedBackfill.start(engine) { try Self.backfillSession(db) }
        let hasBegun = try await ObservedBackfill.waitFor { (observed.latest?.converted ?? 0) >= 40 }
        #expect(hasBegun)

        // The throttle holds from this commit on.
        let heldFrom = try await db.sql { connection -> String in
            try connection.execute(unsafeSQL: "UPDATE throttle_switch SET hold = true")
            return try connection.query("SELECT clock_timestamp()::text AS now")[0].decode(String.self, "now")
        }
        // The backfill's pace says it is held (what its status row shows) ...
        let isHeld = try await ObservedBackfill.waitFor { observed.latest?.holdReason == "the throttle query answered true" }
        #expect(isHeld, "\(String(describing: observed.latest))")
        let heldSeen = clock.now
        // ... and the throttle says so once for the whole backfill, then again 5 s later: the
        // window of observation is at least that long.
        let throttled = "backfill throttled: the throttle query answered true"
        let saidAgain = try await ObservedBackfill.waitFor { observed.count(ofLinesContaining: throttled) >= 2 }
        #expect(saidAgain && observed.count(ofLinesContaining: throttled) == 2, "\(observed.lines.withLock { $0 })")
        // The hold lasts at least from the moment it was seen until its release commits, which is
        // after this instant (the instant after the commit is read later, perhaps much later on a
        // loaded machine, than the backfill's check that sees the release ends).
        let releasing = clock.now
        let heldUntil = try await db.sql { connection -> String in
            let now = try connection.query("SELECT clock_timestamp()::text AS now")[0].decode(String.self, "now")
            try connection.execute(unsafeSQL: "UPDATE throttle_switch SET hold = false")
            return now
        }
        let progress = try await backfill.value
        let wallTime = clock.now - started

        // A batch starts after the hold's commit only on an answer a check gave before it: the
        // last such answer clears one batch per worker, and each worker may still be starting one
        // batch an earlier answer cleared. Without a shared hold, three workers would each run a
        // batch every 25 ms or so for the 5 s and more of the window.
        let (startedWhileHeld, workersAfter) = try await db.sql { connection in
            let row = try connection.query("""
                SELECT (SELECT count(DISTINCT (pid, transaction_began)) FROM draft_writes
                         WHERE by_backfill AND transaction_began > CAST(\(heldFrom) AS timestamptz)
                           AND transaction_began < CAST(\(heldUntil) AS timestamptz)) AS started_while_held,
                       (SELECT count(DISTINCT pid) FROM draft_writes
                         WHERE by_backfill AND transaction_began > CAST(\(heldUntil) AS timestamptz)) AS workers_after
                """)[0]
            return (try row.decode(Int64.self, "started_while_held"), try row.decode(Int64.self, "workers_after"))
        }
        #expect(startedWhileHeld <= Int64(2 * workers - 1), "\(startedWhileHeld) batches started while the throttle held")
        #expect(workersAfter == Int64(workers), "every worker went on when the throttle let go")

        // Every row converted once; the hold counted once, as the wall time it lasted.
        let audit = try await Self.audit(db)
        #expect(audit == Audit(byBackfill: 400, byApplication: 0, convertedAgain: 0, backfillWrites: 400, backfillWritesOfConvertedRows: 0),
                "\(audit)")
        #expect(progress.converted == 400 && progress.workers == workers, "\(progress)")
        #expect(progress.throttleWaits == 1 && progress.lastThrottleReason == "the throttle query answered true" && progress.holdReason == nil,
                "\(progress)")
        #expect(progress.throttled >= releasing - heldSeen && progress.throttled < wallTime,
                "held \(progress.throttled); seen held for \(releasing - heldSeen) of a run of \(wallTime)")
        await db.close()
    }
}
