import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The active sessions ceiling leaves out the sessions the backfill itself opens, even one that
/// opens while a batch is already held.
@Suite("Backfill throttle gate", .timeLimit(.minutes(3)))
struct BackfillThrottleGateTests {
    /// On a cluster of its own, since the ceiling counts the whole server's active sessions. The
    /// session the gate learns of only while it holds the batch is what the backfill's own
    /// count is when its thread connects after the first check: the gate must let the batch go
    /// at its next check, not when that session's statement ends.
    @Test func aSessionLeftOutWhileTheGateHoldsIsLeftOutAtItsNextCheck() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        let configuration = cluster.configuration(applicationName: "gate-test")
        let (pid, sleeping) = try await Self.sleepingSession(on: cluster)

        let excluded = Mutex<[Int32]>([])
        let isHeld = Mutex(false)
        // Gives up after 60 s, so that a gate that never looks again fails the test instead of
        // holding it for the sleeper's ten minutes.
        let gave = ContinuousClock.now + .seconds(60)
        let gate = Task {
            try await onThread { () -> String? in
                let gate = BackfillThrottleGate(PlanBackfillThrottle(targetBatchTime: .zero, maximumActiveSessions: 0),
                                                log: { _ in }, pollInterval: .milliseconds(20))
                gate.excluded = { excluded.withLock { $0 } }
                let connection = try PostgresConnection(configuration: configuration)
                do {
                    return try gate.waitWhileThrottled(on: connection, converted: 0, isStopRequested: { ContinuousClock.now > gave },
                                                       holds: { _ in isHeld.withLock { $0 = true } })?.reason
                } catch let error as BackfillError {
                    Issue.record("the gate held the batch until it gave up: \(error)")
                    return nil
                }
            }
        }
        #expect(try await eventually(within: .seconds(60)) { isHeld.withLock { $0 } }, "the gate never held the batch")
        excluded.withLock { $0 = [pid] }
        let reason = try await gate.value
        #expect(reason == "1 active sessions, over the ceiling of 0")

        try await onThread {
            _ = try PostgresConnection(configuration: configuration).query("SELECT pg_cancel_backend(\(pid))")
        }
        await sleeping.value
    }

    /// The gate's check reads `pg_stat_activity` while the backfill's count may be connecting:
    /// a session the gate learns of between building its query and reading the answer (here,
    /// the one active session, which the list of sessions to leave out names only from its
    /// second reading on) is asked about again, and holds nothing. The same check with a list
    /// that never names it holds the batch, so the first expectation can fail.
    @Test func aSessionLearnedOfWhileTheCheckReadsHoldsNoBatch() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        let configuration = cluster.configuration(applicationName: "gate-test")
        let (pid, sleeping) = try await Self.sleepingSession(on: cluster)
        let reasons = try await onThread { () -> (learned: String?, unknown: String?) in
            let connection = try PostgresConnection(configuration: configuration)
            let throttle = PlanBackfillThrottle(targetBatchTime: .zero, maximumActiveSessions: 0)
            let learning = BackfillThrottleGate(throttle, log: { _ in })
            let readings = Mutex(0)
            learning.excluded = { readings.withLock { $0 += 1; return $0 == 1 ? [] : [pid] } }
            let never = BackfillThrottleGate(throttle, log: { _ in })
            never.excluded = { [] }
            return (try learning.reason(on: connection), try never.reason(on: connection))
        }
        #expect(reasons.learned == nil)
        #expect(reasons.unknown == "1 active sessions, over the ceiling of 0")

        try await onThread {
            _ = try PostgresConnection(configuration: configuration).query("SELECT pg_cancel_backend(\(pid))")
        }
        await sleeping.value
    }

    /// A session of the cluster's, `gate-sleeper`, running `pg_sleep(600)` until the test
    /// cancels it; its server process once it is active.
    private static func sleepingSession(on cluster: EphemeralCluster) async throws -> (pid: Int32, task: Task<Void, Never>) {
        let sleeper = cluster.configuration(applicationName: "gate-sleeper")
        let sleeping = Task { _ = try? await onThread { _ = try PostgresConnection(configuration: sleeper).execute(unsafeSQL: "SELECT pg_sleep(600)") } }
        let active = "FROM pg_stat_activity WHERE application_name = 'gate-sleeper' AND state = 'active'"
        let sleeperPID = try await onThread { () -> Int32? in
            let watcher = try PostgresConnection(configuration: cluster.configuration(applicationName: "gate-watcher"))
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if let pid = try watcher.query(PostgresQuery(unsafeSQL: "SELECT pid \(active)")).first {
                    return try pid.decode(Int32.self, "pid")
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return nil
        }
        return (try #require(sleeperPID, "the sleeping session never became active"), sleeping)
    }
}
