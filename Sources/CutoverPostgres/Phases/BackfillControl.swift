import Cutover
import PostgresClient

/// What an operator asks of a plan's backfill from another terminal: to pause, and targets that
/// replace the ones it started with (`cutover.backfill_control`).
///
/// The running backfill reads it before every batch, so a change takes effect at the next
/// batch. A pause lasts until ``resume(plan:on:)``; a retune, until the backfill finishes
/// (``clear(plan:on:)``). Writing it takes no runner lock: it is how an operator reaches a
/// backfill that holds one.
public struct BackfillControl: Sendable, Equatable {
    /// The next batch waits until resumed.
    public var isPaused = false
    /// Replaces the run's target batch time (zero: fixed batches).
    public var targetBatchTime: Duration?
    /// Replaces the run's nice ratio.
    public var niceRatio: Double?
    /// Replaces the run's active sessions ceiling.
    public var maximumActiveSessions: Int?
    /// Replaces the run's replica lag ceiling.
    public var maximumReplicaLag: Duration?
    /// Who asked last: `role as OS user`.
    public var changedBy = ""
    /// When, as the server gives it.
    public var changedAt = ""

    /// No pause, no retune.
    public init() {}

    /// The retuned values, as `nice ratio 0.5, target batch time 100ms`; empty without any.
    public var retuneText: String {
        [targetBatchTime.map { "target batch time \(DurationText.format($0))" },
         niceRatio.map { "nice ratio \($0 == $0.rounded() ? String(Int64($0)) : String($0))" },
         maximumActiveSessions.map { "active sessions ceiling \($0)" },
         maximumReplicaLag.map { "replica lag ceiling \(DurationText.format($0))" }].compactMap { $0 }.joined(separator: ", ")
    }

    /// Whether it asks nothing of a backfill.
    public var isEmpty: Bool { !isPaused && retuneText.isEmpty }

    /// The plan's control, nil when nobody asked anything.
    public static func read(plan: String, on connection: PostgresConnection) throws -> BackfillControl? {
        guard let row = try connection.query("""
            SELECT is_paused, target_batch_ms, nice_ratio, max_active_sessions, max_replica_lag_ms, changed_by, changed_at::text AS changed_at
              FROM cutover.backfill_control WHERE plan = \(plan)
            """).first else { return nil }
        var control = BackfillControl()
        control.isPaused = try row.decode(Bool.self, "is_paused")
        control.targetBatchTime = try row.decode(Int64?.self, "target_batch_ms").map { .milliseconds($0) }
        control.niceRatio = try row.decode(Double?.self, "nice_ratio")
        control.maximumActiveSessions = try row.decode(Int?.self, "max_active_sessions")
        control.maximumReplicaLag = try row.decode(Int64?.self, "max_replica_lag_ms").map { .milliseconds($0) }
        control.changedBy = try row.decode(String.self, "changed_by")
        control.changedAt = try row.decode(String.self, "changed_at")
        return control
    }

    /// Pauses the plan's backfill before its next batch (or the next backfill before its first).
    @discardableResult
    public static func pause(plan: String, osUser: String, on connection: PostgresConnection) throws -> BackfillControl {
        try write(plan: plan, osUser: osUser, on: connection, assignments: "is_paused = true", insertPaused: true)
    }

    /// Lets a paused backfill go on.
    @discardableResult
    public static func resume(plan: String, osUser: String, on connection: PostgresConnection) throws -> BackfillControl {
        try write(plan: plan, osUser: osUser, on: connection, assignments: "is_paused = false", insertPaused: false)
    }

    /// Replaces the given targets of the plan's backfill from its next batch; nil leaves one as it is.
    @discardableResult
    public static func retune(plan: String, targetBatchTime: Duration?, niceRatio: Double?, maximumActiveSessions: Int?,
                              maximumReplicaLag: Duration?, osUser: String, on connection: PostgresConnection) throws -> BackfillControl {
        let milliseconds = { (duration: Duration?) in duration.map { Int64(($0 / .milliseconds(1)).rounded()) } }
        try connection.query("""
            INSERT INTO cutover.backfill_control AS c (plan, target_batch_ms, nice_ratio, max_active_sessions, max_replica_lag_ms, changed_by)
            VALUES (\(plan), \(milliseconds(targetBatchTime)), \(niceRatio), \(maximumActiveSessions.map(Int64.init)),
                    \(milliseconds(maximumReplicaLag)), current_user || ' as ' || \(osUser))
            ON CONFLICT (plan) DO UPDATE SET
                target_batch_ms = coalesce(EXCLUDED.target_batch_ms, c.target_batch_ms),
                nice_ratio = coalesce(EXCLUDED.nice_ratio, c.nice_ratio),
                max_active_sessions = coalesce(EXCLUDED.max_active_sessions, c.max_active_sessions),
                max_replica_lag_ms = coalesce(EXCLUDED.max_replica_lag_ms, c.max_replica_lag_ms),
                changed_by = EXCLUDED.changed_by, changed_at = now()
            """)
        return try read(plan: plan, on: connection) ?? BackfillControl()
    }

    /// Forgets the plan's pause and retune: the backfill finished.
    public static func clear(plan: String, on connection: PostgresConnection) throws {
        try connection.query("DELETE FROM cutover.backfill_control WHERE plan = \(plan)")
    }

    private static func write(plan: String, osUser: String, on connection: PostgresConnection, assignments: String,
                              insertPaused: Bool) throws -> BackfillControl {
        try connection.query(PostgresQuery(unsafeSQL: """
            INSERT INTO cutover.backfill_control (plan, is_paused, changed_by) VALUES ($1, $2, current_user || ' as ' || $3)
            ON CONFLICT (plan) DO UPDATE SET \(assignments), changed_by = EXCLUDED.changed_by, changed_at = now()
            """, binds: [plan.postgresBind, insertPaused.postgresBind, osUser.postgresBind]))
        return try read(plan: plan, on: connection) ?? BackfillControl()
    }
}
