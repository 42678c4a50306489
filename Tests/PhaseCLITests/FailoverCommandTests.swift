import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// A step cut by a failover reconnects to the new primary and finishes, once: through the
/// built `phase` binary, on a real pg_auto_failover set (a monitor, a primary and a
/// synchronous standby) that the test starts.
@Suite("phase through a failover", .serialized, .timeLimit(.minutes(20)))
struct FailoverCommandTests {
    private func database(_ label: String, rows: Int, on set: AutoFailoverCluster) async throws -> WorkflowDatabase {
        try await WorkflowDatabase.make(label, rows: rows, in: TestFailoverSet.database(label, on: set))
    }

    private func run(_ db: WorkflowDatabase, _ steps: [[String]]) async throws {
        for arguments in steps {
            let run = try await db.phase(arguments)
            try #require(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
    }

    /// Polls `condition` every 20 ms until it holds; fails the test after `limit`.
    private func waitUntil(_ what: String, limit: Duration = .seconds(120), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            try #require(ContinuousClock.now < deadline, "timed out waiting until \(what)")
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the backfill's stored cursor has moved; on a timeout, says what `phase` printed.
    private func waitUntilMidway(_ db: WorkflowDatabase, _ started: PhaseBinary.Started) async throws {
        do {
            try await waitUntil("the backfill's stored cursor moved") {
                try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'") ?? 0 > 0
            }
        } catch {
            let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(1)) }
            Issue.record("phase backfill, exit \(run.status): \(run.diagnostics)")
            throw error
        }
    }

    private func historyCount(_ db: WorkflowDatabase, step: String, outcome: String) async throws -> Int? {
        try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE step = '\(step)' AND outcome = '\(outcome)'")
    }

    @Test func aBackfillCutByAFailoverFinishesOnTheNewPrimaryWithEveryRowConverted() async throws {
        try await TestFailoverSet.use { set in
            let rows = 8000
            let db = try await database("failover_backfill", rows: rows, on: set)
            try await run(db, [["init"], ["expand"], ["switch", "modern", "--force-readers"]])
            let old = try await onThread { try set.primary() }
            // Small batches with a pause between them: about a minute of work, so that the
            // failover cuts it however long pg_auto_failover takes on a loaded machine.
            let started = try PhaseBinary.start(["backfill", "--batch-size", "20", "--batch-delay", "120ms", "--reconnect-for", "180s"],
                                                databaseURL: db.url)
            try await waitUntilMidway(db, started)
            let promoted = try await set.performFailover()
            let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(600)) }

            #expect(promoted != old)
            #expect(run.status == 0, "\(run.diagnostics)")
            // Cut mid-way: it said what it lost and that it reconnects, and it resumed.
            #expect(run.diagnostics.contains("backfill: "), "\(run.diagnostics)")
            #expect(run.diagnostics.contains("reconnecting in"), "\(run.diagnostics)")
            #expect(run.diagnostics.contains("taking over 'backfill'"), "\(run.diagnostics)")
            #expect(run.output.contains("backfill done"), "\(run.output)")
            #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
            #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts") == rows)
            #expect(try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state") == Int64(rows))
            #expect(try await db.phaseName() == "backfilled")
            #expect(try await historyCount(db, step: "backfill", outcome: "interrupted") == 1)
            #expect(try await historyCount(db, step: "backfill", outcome: "done") == 1)
            // What answered is the promoted node.
            #expect(try await db.value(Int.self, "SELECT inet_server_port()") == promoted.port)
        }
    }

    @Test func aSwitchCutByAFailoverAfterItsLeaseAndBeforeItsChangeHappensOnce() async throws {
        try await TestFailoverSet.use { set in
            let db = try await database("failover_switch", rows: 50, on: set)
            try await run(db, [["init"], ["expand"]])
            let epoch = try #require(try await db.value(Int64.self, "SELECT epoch FROM cutover.migration_state"))
            let old = try await onThread { try set.primary() }
            // A session holds the plan's state row, so that the switch, once it has its lease and
            // its recorded attempt, waits in its compare-and-set: there the failover cuts it. The
            // holder keeps the lock until its server goes down with the failover.
            let holder = TestFailoverSet.holdUntilFailover("SELECT 1 FROM cutover.migration_state WHERE plan = 'drafts' FOR UPDATE",
                                                           on: db.database)
            try await waitUntil("the row holder has the lock") {
                try await db.value(Int.self, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'failover-row-holder' AND query LIKE 'SELECT pg_sleep%'") == 1
            }
            // The switch's wait for the row is bounded by the runner's session lock timeout (10 s),
            // which a failover on a busy machine can outlast: this switch waits as long as the
            // failover may take, so that the failover is what ends its wait.
            let patient = db.url + "&options=" + "-c lock_timeout=300s".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let started = try PhaseBinary.start(["switch", "modern", "--force-readers", "--reconnect-for", "180s"], databaseURL: patient)
            try await waitUntil("the switch waits in its compare-and-set") {
                try await db.value(Int.self, """
                    SELECT count(*) FROM pg_stat_activity
                     WHERE application_name = 'cutover-phase' AND wait_event_type = 'Lock' AND query LIKE '%UPDATE cutover.migration_state%'
                    """) == 1
            }
            #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.runner_lease WHERE plan = 'drafts'") == 1)
            #expect(try await historyCount(db, step: "switch modern", outcome: "running") == 1)
            let promoted = try await set.performFailover()
            let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(600)) }
            let held = await holder.result

            #expect(promoted != old)
            #expect(throws: PostgresError.self) { try held.get() }
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(run.diagnostics.contains("switch modern: "), "\(run.diagnostics)")
            #expect(run.diagnostics.contains("reconnecting in"), "\(run.diagnostics)")
            #expect(run.output.contains("switch modern done"), "\(run.output)")
            // The epoch moved exactly once, and the history shows the cut attempt and the one that did it.
            #expect(try await db.value(Int64.self, "SELECT epoch FROM cutover.migration_state") == epoch + 1)
            #expect(try await db.phaseName() == "modern")
            #expect(try await historyCount(db, step: "switch modern", outcome: "interrupted") == 1)
            #expect(try await historyCount(db, step: "switch modern", outcome: "done") == 1)
            #expect(try await db.value(Int.self, "SELECT inet_server_port()") == promoted.port)
        }
    }

    @Test func withReconnectingOffALostStepStopsWithTheLineToRunItAgain() async throws {
        try await TestFailoverSet.use { set in
            let db = try await database("failover_no_reconnect", rows: 8000, on: set)
            try await run(db, [["init"], ["expand"], ["switch", "modern", "--force-readers"]])
            // Paced to take well over a minute, so that it is still running when the failover
            // cuts it, however long pg_auto_failover takes on a loaded machine: it stops at the
            // cut, so the pace costs the test nothing.
            let started = try PhaseBinary.start(["backfill", "--batch-size", "20", "--batch-delay", "200ms", "--reconnect-for", "0s"],
                                                databaseURL: db.url)
            try await waitUntilMidway(db, started)
            try await set.performFailover()
            let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(600)) }

            #expect(run.status == 69, "\(run.diagnostics)")
            #expect(!run.diagnostics.contains("reconnecting in"), "\(run.diagnostics)")
            #expect(run.diagnostics.contains("run the same command again"), "\(run.diagnostics)")
            #expect(try await db.phaseName() == "modern")
            // Running it again finishes it on the new primary.
            let again = try await db.phase(["backfill"])
            #expect(again.status == 0, "\(again.diagnostics)")
            #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        }
    }

    @Test func aSwitchWhoseCommitReplyIsLostReconnectsAndReportsItDoneOnce() async throws {
        let db = try await WorkflowDatabase.make("reconnect_lost_reply", rows: 20)
        try await run(db, [["init"], ["expand"]])
        let epoch = try #require(try await db.value(Int64.self, "SELECT epoch FROM cutover.migration_state"))
        let (proxy, proxied) = try db.database.throughLossyProxy()
        defer { proxy.stop() }
        proxy.loseNextReplyToExplicitCommit()
        let run = try await onThread { try PhaseBinary.run(["switch", "modern", "--force-readers"], databaseURL: proxied) }

        #expect(proxy.lostReplyCount == 1)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("switch modern: the connection broke around COMMIT; reconnecting in "), "\(run.diagnostics)")
        #expect(run.output.hasPrefix("switch modern already done (epoch \(epoch + 1), by role "), "\(run.output)")
        #expect(try await db.value(Int64.self, "SELECT epoch FROM cutover.migration_state") == epoch + 1)
        #expect(try await historyCount(db, step: "switch modern", outcome: "done") == 1)
        #expect(try await historyCount(db, step: "switch modern", outcome: "skipped") == 1)
    }
}
