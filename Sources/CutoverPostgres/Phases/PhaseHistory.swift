import Cutover
import Foundation
import PostgresClient

/// One attempt at a step, as `cutover.phase_history` records it.
public struct PhaseHistoryEntry: Sendable, Equatable {
    /// The row's id, in order of attempts.
    public var id: Int64
    /// The plan.
    public var plan: String
    /// The step's name ("expand", "switch modern", …).
    public var step: String
    /// Whether the step takes the migration further or undoes part of it.
    public var direction: PhaseStep.Direction
    /// The database role that ran it.
    public var databaseRole: String
    /// The operating-system user that ran it.
    public var osUser: String
    /// When it started.
    public var startedAt: Date
    /// How long it took, when it ended.
    public var durationMilliseconds: Int64?
    /// How the attempt went, or that it is still running.
    public var outcome: Outcome
    /// Why it failed or was refused.
    public var error: String?
    /// The checksum of the SQL it applied.
    public var checksum: String?
    /// The epoch it left the plan at.
    public var epoch: Int64?
    /// Details as JSON text: checks and their observed values, flags that forced it.
    public var details: String
}

/// Reads and writes `cutover.phase_history`.
public enum PhaseHistory {
    /// Records the start of an attempt (committed at once, so that it survives a killed runner)
    /// and returns its id.
    static func begin(plan: String, step: String, direction: PhaseStep.Direction, details: String,
                      on connection: PostgresConnection) throws -> Int64 {
        try connection.query("""
            INSERT INTO cutover.phase_history (plan, step, direction, database_role, os_user, outcome, details)
            VALUES (\(plan), \(step), \(direction.rawValue), current_user, \(osUser), \(PhaseHistoryEntry.Outcome.running.rawValue), \(details)::jsonb)
            RETURNING id
            """)[0].decode(Int64.self, "id")
    }

    /// Ends an attempt with its outcome.
    static func finish(_ id: Int64, outcome: PhaseHistoryEntry.Outcome, error: String? = nil, checksum: String? = nil,
                       epoch: Int64? = nil, on connection: PostgresConnection) throws {
        try connection.query("""
            UPDATE cutover.phase_history
               SET outcome = \(outcome.rawValue), error = \(error), checksum = coalesce(\(checksum), checksum),
                   epoch = coalesce(\(epoch), epoch),
                   duration_ms = (extract(epoch FROM clock_timestamp() - started_at) * 1000)::bigint
             WHERE id = \(id)
            """)
    }

    /// Records an attempt that was refused before it began.
    static func refused(plan: String, step: String, direction: PhaseStep.Direction, reason: String, details: String,
                        on connection: PostgresConnection) throws {
        let id = try begin(plan: plan, step: step, direction: direction, details: details, on: connection)
        try finish(id, outcome: .refused, error: reason, on: connection)
    }

    /// Records a step asked for again after it had happened: it changed nothing.
    static func skipped(plan: String, step: String, direction: PhaseStep.Direction, details: String,
                        on connection: PostgresConnection) throws {
        let id = try begin(plan: plan, step: step, direction: direction, details: details, on: connection)
        try finish(id, outcome: .skipped, on: connection)
    }

    /// The latest attempt at `step` that did it, if any.
    public static func lastDone(plan: String, step: String, on connection: PostgresConnection) throws -> PhaseHistoryEntry? {
        try connection.query("""
            SELECT \(unsafeRaw: columns) FROM cutover.phase_history
             WHERE plan = \(plan) AND step = \(step) AND outcome = \(PhaseHistoryEntry.Outcome.done.rawValue) ORDER BY id DESC LIMIT 1
            """).first.map(entry)
    }

    /// The latest attempt at `step` that began to change something (done, failed, interrupted
    /// or still running: ``PhaseHistoryEntry/Outcome/beganChanges``), if any.
    static func lastAttempt(plan: String, step: String, on connection: PostgresConnection) throws -> PhaseHistoryEntry? {
        try connection.query("""
            SELECT \(unsafeRaw: columns) FROM cutover.phase_history
             WHERE plan = \(plan) AND step = \(step) AND outcome = ANY (\(Self.beganChanges)::text[]) ORDER BY id DESC LIMIT 1
            """).first.map(entry)
    }

    /// Marks attempts left running by a runner that died as interrupted, and returns them.
    /// Call only while holding the runner lock: then no attempt can really be running.
    static func markInterrupted(plan: String, on connection: PostgresConnection) throws -> [PhaseHistoryEntry] {
        let rows = try connection.query("""
            UPDATE cutover.phase_history SET outcome = \(PhaseHistoryEntry.Outcome.interrupted.rawValue),
                   error = 'the runner stopped before the step finished'
             WHERE plan = \(plan) AND outcome = \(PhaseHistoryEntry.Outcome.running.rawValue)
            RETURNING \(unsafeRaw: columns)
            """)
        return try rows.map(entry)
    }

    /// Attempts left running: by a runner at work now, or by one that died.
    public static func running(plan: String, on connection: PostgresConnection) throws -> [PhaseHistoryEntry] {
        try connection.query("""
            SELECT \(unsafeRaw: columns) FROM cutover.phase_history WHERE plan = \(plan) AND outcome = \(PhaseHistoryEntry.Outcome.running.rawValue) ORDER BY id
            """).map(entry)
    }

    /// The most recent attempts, oldest first.
    public static func list(plan: String, limit: Int = 100, on connection: PostgresConnection) throws -> [PhaseHistoryEntry] {
        try connection.query("""
            SELECT * FROM (SELECT \(unsafeRaw: columns) FROM cutover.phase_history WHERE plan = \(plan)
                            ORDER BY id DESC LIMIT \(limit)) recent ORDER BY id
            """).map(entry)
    }

    /// The outcomes of attempts that began to change something, as a text[] literal.
    private static let beganChanges = PhaseHistoryEntry.Outcome.allCases.filter(\.beganChanges).map(\.rawValue).joinedAsTextArray

    private static let columns = """
        id, plan, step, direction, database_role, os_user, started_at, duration_ms, outcome, error, checksum, epoch, details::text AS details
        """

    private static func entry(_ row: PostgresRow) throws -> PhaseHistoryEntry {
        PhaseHistoryEntry(id: try row.decode(Int64.self, "id"), plan: try row.decode(String.self, "plan"),
                          step: try row.decode(String.self, "step"), direction: try row.decode(PhaseStep.Direction.self, "direction"),
                          databaseRole: try row.decode(String.self, "database_role"), osUser: try row.decode(String.self, "os_user"),
                          startedAt: try row.decode(Date.self, "started_at"),
                          durationMilliseconds: try row.decode(Int64?.self, "duration_ms"),
                          outcome: try row.decode(PhaseHistoryEntry.Outcome.self, "outcome"), error: try row.decode(String?.self, "error"),
                          checksum: try row.decode(String?.self, "checksum"), epoch: try row.decode(Int64?.self, "epoch"),
                          details: try row.decode(String.self, "details"))
    }

    /// The operating-system user running this process.
    public static var osUser: String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"
    }
}
