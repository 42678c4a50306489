import CutoverPostgres
import Foundation
import PostgresClient

/// What the server did while one backfill ran, so that a slow run says why: the WAL written,
/// the checkpoints taken, the shared buffers client backends had to write out themselves, and
/// where the backfill's own sessions spent their time, sampled from `pg_stat_activity`.
struct BackfillObservation: Sendable, Equatable {
    /// WAL written while the backfill ran, by every session.
    var walBytes: Int64
    /// Checkpoints begun, timed and requested.
    var checkpoints: Int64
    /// Shared buffers that client backends wrote out themselves (no free buffer to take);
    /// nil where the server does not count them.
    var backendWrites: Int64?
    /// Samples of the backfill's sessions by what they were doing: `CPU` (running, no wait
    /// event), a wait event as `Type:Event`, or `between statements` (waiting on the client).
    var samples: [String: Int]

    /// Every sample taken.
    var sampleCount: Int { samples.values.reduce(0, +) }

    /// The share of samples in `state`, 0 to 1.
    func share(of state: String) -> Double {
        sampleCount > 0 ? Double(samples[state] ?? 0) / Double(sampleCount) : 0
    }

    /// `WAL 490 MB, 3 checkpoints, 1,204 buffers written by backends; its session: CPU 62%, IO:WALWrite 10%, …`:
    /// the states of at least 1% of samples, most first.
    var summary: String {
        let writes = backendWrites.map { ", \(Format.number(Double($0))) buffers written by backends" } ?? ""
        return "WAL \(Format.number(Double(walBytes) / 1_048_576)) MB, \(checkpoints) checkpoint\(checkpoints == 1 ? "" : "s")\(writes); "
            + "its sessions (\(sampleCount) samples): " + states
    }

    /// `CPU 60%, IO:WALSync 25%, …`: the states of at least 1% of the samples, most first.
    private var states: String {
        let shown = samples.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .filter { share(of: $0.key) >= 0.01 }
            .map { "\($0.key) \(Int((share(of: $0.key) * 100).rounded()))%" }
        return shown.isEmpty ? "not seen" : shown.joined(separator: ", ")
    }

    /// The samples of sessions running a statement, leaving out those between statements; the
    /// counters as they are.
    var whileRunning: BackfillObservation {
        var running = self
        running.samples = samples.filter { $0.key != Self.betweenStatements }
        return running
    }

    /// `while running a statement (120 samples): CPU 60%, IO:WALSync 25%, …`: where sessions that
    /// spend most of their time waiting for their client (a live load's) were when they were
    /// not, the states of at least 1% of those samples, most first.
    var whileRunningSummary: String {
        let running = whileRunning
        return "while running a statement (\(running.sampleCount) samples): " + running.states
    }

    /// The samples of `self` and `other` together, and their counters added.
    func adding(_ other: BackfillObservation) -> BackfillObservation {
        BackfillObservation(walBytes: walBytes + other.walBytes, checkpoints: checkpoints + other.checkpoints,
                            backendWrites: backendWrites.flatMap { mine in other.backendWrites.map { mine + $0 } },
                            samples: samples.merging(other.samples, uniquingKeysWith: +))
    }

    /// The samples of every observation together; nil for none.
    static func combined(_ observations: [BackfillObservation]) -> BackfillObservation? {
        guard var total = observations.first else { return nil }
        for observation in observations.dropFirst() { total = total.adding(observation) }
        return total
    }

    /// What a session that is not running a statement is sampled as.
    static let betweenStatements = "between statements"

    /// The figures for a scenario's `extra`, each name prefixed with `prefix`.
    func extra(prefix: String = "") -> [String: Double] {
        var figures = ["\(prefix)wal_mb": Double(walBytes) / 1_048_576, "\(prefix)checkpoints": Double(checkpoints),
                       "\(prefix)session_samples": Double(sampleCount)]
        if let backendWrites { figures["\(prefix)backend_buffer_writes"] = Double(backendWrites) }
        for state in ["CPU", "IO:WALSync", "IO:WALWrite", "LWLock:WALWrite", "IO:DataFileRead", "IO:DataFileWrite",
                      Self.betweenStatements] {
            figures["\(prefix)share_" + state.lowercased().replacingOccurrences(of: ":", with: "_")
                        .replacingOccurrences(of: " ", with: "_")] = share(of: state)
        }
        return figures
    }
}

/// Watches the server while a backfill runs: its counters before and after, and the
/// backfill's sessions (by `application_name`) every ``interval`` from a session of its own.
final class BackfillObserver: Sendable {
    /// How often the backfill's sessions are sampled, unless told otherwise.
    static let interval: Duration = .milliseconds(50)

    private let configuration: PostgresConfiguration
    private let before: Counters
    private let stop = StopSignal()
    private let sampler: Task<[String: Int], any Error>

    private struct Counters: Sendable {
        var walPosition: String
        var checkpoints: Int64
        var backendWrites: Int64?
    }

    /// The observer's own sessions' `application_name`: never one it samples, nor another
    /// observer's sessions among the live load's.
    static let applicationName = "cutover-bench-observer"

    /// Reads the counters and starts sampling the sessions named `applicationNames` every
    /// `interval`, on sessions of its own to `configuration`'s database.
    init(configuration: PostgresConfiguration, applicationNames: [String], interval: Duration = BackfillObserver.interval) async throws {
        var own = configuration
        own.applicationName = Self.applicationName
        let configuration = own
        self.configuration = configuration
        before = try await runOnDedicatedThread(named: "cutover-bench-observer") {
            try Self.counters(on: PostgresConnection(configuration: configuration))
        }
        let stop = stop
        let names = applicationNames.joined(separator: ",")
        sampler = Task {
            try await runOnDedicatedThread(named: "cutover-bench-observer") { () throws -> [String: Int] in
                let connection = try PostgresConnection(configuration: configuration)
                var samples: [String: Int] = [:]
                while !stop.isRaised {
                    let rows = try connection.query("""
                        SELECT CASE WHEN state <> 'active' THEN \(BackfillObservation.betweenStatements)
                                    ELSE coalesce(wait_event_type || ':' || wait_event, 'CPU') END AS doing
                          FROM pg_stat_activity
                         WHERE application_name = ANY(string_to_array(\(names), ','))
                        """)
                    for row in rows { samples[try row.decode(String.self, "doing"), default: 0] += 1 }
                    Thread.sleep(forTimeInterval: interval.seconds)
                }
                return samples
            }
        }
    }

    /// Stops sampling and reads the counters again.
    func finish() async throws -> BackfillObservation {
        stop.raise()
        let samples = try await sampler.value
        let configuration = configuration
        let before = before
        return try await runOnDedicatedThread(named: "cutover-bench-observer") {
            let connection = try PostgresConnection(configuration: configuration)
            let after = try Self.counters(on: connection)
            let wal = try connection.query("SELECT pg_wal_lsn_diff(\(after.walPosition)::pg_lsn, \(before.walPosition)::pg_lsn)::bigint AS bytes")[0]
                .decode(Int64.self, "bytes")
            return BackfillObservation(
                walBytes: wal, checkpoints: after.checkpoints - before.checkpoints,
                backendWrites: after.backendWrites.flatMap { later in before.backendWrites.map { later - $0 } }, samples: samples)
        }
    }

    /// PostgreSQL 17 moved the checkpoint counts to `pg_stat_checkpointer` and took the
    /// backends' writes out of `pg_stat_bgwriter`; `pg_stat_io` (16 and later) has those.
    private static func counters(on connection: PostgresConnection) throws -> Counters {
        let version = connection.serverVersion
        let checkpoints = version >= 170000
            ? "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
            : "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
        let writes = version >= 160000
            ? "SELECT sum(writes)::bigint FROM pg_stat_io WHERE backend_type = 'client backend'"
            : "SELECT buffers_backend FROM pg_stat_bgwriter"
        let row = try connection.query(PostgresQuery(unsafeSQL: """
            SELECT pg_current_wal_lsn()::text AS position, (\(checkpoints))::bigint AS checkpoints, (\(writes))::bigint AS writes
            """))[0]
        return Counters(walPosition: try row.decode(String.self, "position"), checkpoints: try row.decode(Int64.self, "checkpoints"),
                        backendWrites: try row.decode(Int64?.self, "writes"))
    }
}
