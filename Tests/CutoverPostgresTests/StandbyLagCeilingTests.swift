import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// Backfill beside a real hot standby whose replay the test pauses: it waits while the
/// standby's replay lag is over the ceiling, and goes on without a standby that replays nothing.
@Suite("Backfill under a replica lag ceiling", .serialized, .timeLimit(.minutes(3)))
struct StandbyLagCeilingTests {
    /// What a backfill on its own thread reported.
    private final class Observed: Sendable {
        let lines = Mutex<[String]>([])
        let progress = Mutex<[BackfillEngine.Progress]>([])
        func saw(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    }

    /// A database on `primary` with `rows` v1-only drafts after expand, and the migration state.
    static func expandedDatabase(_ name: String, on primary: EphemeralCluster, rows: Int) async throws -> PostgresConfiguration {
        try await onThread {
            let admin = try PostgresConnection(configuration: primary.configuration())
            try admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
            let connection = try PostgresConnection(configuration: primary.configuration(database: name))
            try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try connection.query("""
                INSERT INTO drafts (id, title, revision) SELECT 'draft-' || lpad(n::text, 5, '0'), 'Legacy ' || n, 1
                  FROM generate_series(1, \(rows)) AS n
                """)
            try DraftsPlan.declarative.expand(on: connection)
            try connection.query("INSERT INTO cutover.migration_state (plan, phase, writer_path) VALUES ('drafts', 'modern', 'modern')")
        }
        return primary.configuration(database: name)
    }

    /// Waits, bounded, until `standby` has replayed everything `primary` has written so far.
    private func waitForReplay(_ standby: PostgresConnection, of primary: PostgresConnection) throws {
        let lsn = try primary.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")[0].decode(String.self, "lsn")
        let deadline = ContinuousClock.now + .seconds(90)
        while try !standby.query("SELECT pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn AS done")[0].decode(Bool.self, "done") {
            guard ContinuousClock.now < deadline else { throw PostgresError(code: .unexpectedResponse, message: "the standby never replayed \(lsn)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// A primary holding 2,000 v1-only drafts in database `name`, and a standby that replayed
    /// them and whose replay is paused now.
    private func pausedStandby(_ name: String) async throws -> (EphemeralCluster, EphemeralCluster, PostgresConfiguration) {
        let primary = try await EphemeralCluster.start()
        do {
            // Replies every second, so that the primary hears of replay soon after it resumes.
            let standby = try await primary.startStandby(settings: ["wal_receiver_status_interval": "1s"])
            do {
                let configuration = try await Self.expandedDatabase(name, on: primary, rows: 2000)
                try await onThread {
                    let session = try PostgresConnection(configuration: standby.configuration())
                    try self.waitForReplay(session, of: try PostgresConnection(configuration: primary.configuration()))
                    try session.execute(unsafeSQL: "SELECT pg_wal_replay_pause()")
                }
                return (primary, standby, configuration)
            } catch {
                standby.stop()
                throw error
            }
        } catch {
            primary.stop()
            throw error
        }
    }

    /// Starts a backfill of the database at `configuration` on a thread of its own.
    private func startBackfill(_ configuration: PostgresConfiguration, ceiling: ReplicaLagCeiling, observed: Observed,
                               isStopRequested: @escaping @Sendable () -> Bool = { false })
        throws -> Task<Result<BackfillEngine.Progress, any Error>, Never>
    {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        // 40 batches with a rest of 100 ms after each: the backfill lasts well past the ceiling.
        let engine = try BackfillEngine(source, backfill: step, options: .init(batchSize: 50, batchDelay: .milliseconds(100), replicaLag: ceiling))
        return Task {
            do {
                return .success(try await onThread {
                    let connection = try PostgresConnection(configuration: configuration)
                    return try engine.run(on: connection, isStopRequested: isStopRequested, progress: { progress in observed.progress.withLock { $0.append(progress) } },
                                          log: { line in observed.lines.withLock { $0.append(line) } })
                })
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits, bounded, until `observed` has a line containing `text`.
    private func waitForLine(_ text: String, in observed: Observed, within limit: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while !observed.saw(text) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    @Test func backfillWaitsWhileAStandbyIsOverTheCeilingAndNeverStartsABatchOverIt() async throws {
        let (primary, standby, configuration) = try await pausedStandby("lag_ceiling")
        defer { standby.stop(); primary.stop() }
        let ceiling = ReplicaLagCeiling(maximum: .seconds(1), noticeInterval: .seconds(2), pollInterval: .milliseconds(100))
        let observed = Observed()
        let backfill = try startBackfill(configuration, ceiling: ceiling, observed: observed)
        let waited = try await waitForLine("backfill waits for standby standby_", in: observed)
        #expect(waited, "the backfill never said it waits: \(observed.lines.withLock { $0 })")
        try await onThread {
            _ = try PostgresConnection(configuration: standby.configuration()).execute(unsafeSQL: "SELECT pg_wal_replay_resume()")
        }
        let final = try await backfill.value.get()

        #expect(final.converted == 2000)
        #expect(final.replicaWaits >= 1)
        #expect(final.replicaWaited > .zero)
        let line = try #require(observed.lines.withLock { $0.first { $0.contains("backfill waits") } })
        #expect(line.contains("is over the ceiling of 1.0s"), "\(line)")
        let batches = observed.progress.withLock { $0 }.filter { $0.batches > 0 }
        #expect(batches.count >= 40)
        for progress in batches {
            let start = try #require(progress.replicaLagAtStart, "batch \(progress.batches) started without a lag measured")
            let after = try #require(progress.replicaLagAfter)
            #expect(start <= ceiling.maximum, "batch \(progress.batches) started with a lag of \(start)")
            #expect(after <= ceiling.maximum + progress.lastBatchSpan,
                    "after batch \(progress.batches) the lag was \(after), over the ceiling by more than the batch's \(progress.lastBatchSpan)")
        }
        // While replay stood still the lag grew past the ceiling: the wait was needed.
        #expect(batches.contains { ($0.replicaLagAfter ?? .zero) > .zero })
    }

    @Test func aStandbyThatReplaysNothingIsReportedAndNoLongerWaitedForAfterTheStallLimit() async throws {
        let (primary, standby, configuration) = try await pausedStandby("lag_stall")
        defer { standby.stop(); primary.stop() }
        let ceiling = ReplicaLagCeiling(maximum: .seconds(1), stallLimit: .seconds(2), noticeInterval: .seconds(2),
                                        pollInterval: .milliseconds(100))
        let observed = Observed()
        // Replay stays paused: the backfill must finish anyway.
        let final = try await startBackfill(configuration, ceiling: ceiling, observed: observed).value.get()
        #expect(final.converted == 2000)
        #expect(final.replicaWaits >= 1)
        let lines = observed.lines.withLock { $0 }
        #expect(lines.contains { $0.contains("has replayed nothing for") && $0.contains("backfill goes on without waiting for it") }, "\(lines)")
    }

    @Test func aStopRequestedWhileWaitingForAStandbyStopsTheBackfillWithItsCursorSaved() async throws {
        let (primary, standby, configuration) = try await pausedStandby("lag_stop")
        defer { standby.stop(); primary.stop() }
        let ceiling = ReplicaLagCeiling(maximum: .seconds(1), noticeInterval: .seconds(2), pollInterval: .milliseconds(100))
        let observed = Observed()
        let stop = Mutex(false)
        let backfill = try startBackfill(configuration, ceiling: ceiling, observed: observed, isStopRequested: { stop.withLock { $0 } })
        #expect(try await waitForLine("backfill waits for standby", in: observed))
        stop.withLock { $0 = true }
        let result = await backfill.value
        guard case .failure(let error) = result, case BackfillError.stopped(let converted)? = error as? BackfillError else {
            Issue.record("the backfill did not stop as asked: \(result)")
            return
        }
        #expect(converted > 0 && converted < 2000)
        let saved = try await onThread {
            try PostgresConnection(configuration: configuration).query("SELECT backfill_converted FROM cutover.migration_state")[0]
                .decode(Int64.self, "backfill_converted")
        }
        #expect(saved == converted)
    }
}
