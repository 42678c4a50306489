import Foundation
import PostgresClient

/// The exclusion that lets one phase runner at a time work on a plan.
///
/// It is a row of `cutover.runner_lease` per plan naming the server session that holds it, not
/// an advisory lock: an advisory lock's key can be taken by any role that can connect, so an
/// application role could squat on it and keep the migrator from rolling back. Only the
/// control schema's owner may write the lease. A lease whose session has ended holds nothing:
/// a runner that dies (even by SIGKILL) frees the plan as soon as the server ends its session,
/// which a server-side keepalive or `client_connection_check_interval` makes prompt.
///
/// ```swift
/// try RunnerLock.acquire(plan: "drafts", on: connection)   // or RunnerLockError.held
/// defer { try? RunnerLock.release(plan: "drafts", on: connection) }
/// ```
public enum RunnerLock {
    /// Who holds a plan's lease.
    public struct Holder: Sendable, Equatable, CustomStringConvertible {
        /// The plan it is held for.
        public var plan: String
        /// The holder's server process.
        public var pid: Int32
        /// The holder's `application_name` when it took the lease.
        public var applicationName: String
        /// The database role it runs as.
        public var databaseRole: String
        /// The operating-system user running it.
        public var osUser: String
        /// When it took the lease.
        public var since: Date?

        public var description: String {
            let name = applicationName.isEmpty ? "no application_name" : "application_name \(applicationName)"
            let time = since.map { " since \(ISO8601DateFormatter().string(from: $0))" } ?? ""
            return "pid \(pid) (\(name), role \(databaseRole), OS user \(osUser))\(time)"
        }
    }

    /// A lease row's session is alive: its pid is a session that began when the lease says.
    /// `backend_start` is hidden from roles without rights over the session; such a session is
    /// taken as alive, which errs towards refusing.
    private static let sessionAlive = """
        EXISTS (SELECT 1 FROM pg_stat_activity a
                 WHERE a.pid = l.pid AND (a.backend_start IS NULL OR a.backend_start = l.backend_start))
        """

    /// Takes `plan`'s lease for this session, or throws ``RunnerLockError/held(by:plan:)``
    /// naming the holder. Taking a lease this connection holds already succeeds.
    ///
    /// The lease names the server session and `holder`, a secret of the connection
    /// (``holderID(for:)`` unless given): a server session that a pooler passes from client to
    /// client between transactions re-enters only the lease of the connection that took it, so
    /// two runners are never both admitted through it. (``PhaseRunner`` refuses a transaction
    /// pooler before it gets here; this holds even where that detection misses.)
    ///
    /// A holder that is running a statement is refused at once. A holder whose session sits
    /// idle may be a runner whose client has just died (its reply lost, its process killed)
    /// and whose session the server is about to end, so an idle holder is waited for, up to
    /// `idleHolderGrace`, before the refusal.
    public static func acquire(plan: String, idleHolderGrace: Duration = .seconds(3), holder holderID: String? = nil,
                               on connection: PostgresConnection) throws {
        let holderID = holderID ?? Self.holderID(for: connection)
        let clock = ContinuousClock()
        let deadline = clock.now + idleHolderGrace
        while true {
            if try take(plan: plan, holder: holderID, on: connection) { return }
            // No holder left means it ended just now: take it again at once, within the grace.
            let holder = try holder(plan: plan, on: connection)
            let isWorthWaiting = try holder.map { try isIdle(pid: $0.pid, on: connection) } ?? true
            guard isWorthWaiting, clock.now < deadline else { throw RunnerLockError.held(by: holder, plan: plan) }
            if holder != nil { Thread.sleep(forTimeInterval: 0.05) }
        }
    }

    /// One attempt at the lease: true when this session holds it now.
    private static func take(plan: String, holder: String, on connection: PostgresConnection) throws -> Bool {
        // One statement, so two runners racing for the same plan serialize on the row: the
        // second sees the first's committed lease, alive, and takes nothing.
        !(try connection.query("""
            INSERT INTO cutover.runner_lease AS l (plan, pid, backend_start, database_role, os_user, application_name, holder)
            SELECT \(plan), a.pid, a.backend_start, current_user, \(PhaseHistory.osUser), coalesce(a.application_name, ''), \(holder)
              FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()
            ON CONFLICT (plan) DO UPDATE
               SET pid = EXCLUDED.pid, backend_start = EXCLUDED.backend_start, database_role = EXCLUDED.database_role,
                   os_user = EXCLUDED.os_user, application_name = EXCLUDED.application_name, acquired_at = now(),
                   holder = EXCLUDED.holder
             WHERE (l.pid = EXCLUDED.pid AND l.backend_start = EXCLUDED.backend_start AND l.holder IS NOT DISTINCT FROM EXCLUDED.holder)
                OR (l.holder IS NULL AND l.pid = EXCLUDED.pid AND l.backend_start = EXCLUDED.backend_start)
                OR NOT \(unsafeRaw: sessionAlive)
            RETURNING l.pid
            """).isEmpty)
    }

    /// Whether the session `pid` is idle, outside any transaction (unknown counts as busy).
    private static func isIdle(pid: Int32, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT state = 'idle' AS idle FROM pg_stat_activity WHERE pid = \(pid)")
            .first?.decode(Bool?.self, "idle") ?? false
    }

    /// Gives up `plan`'s lease if this connection holds it.
    public static func release(plan: String, holder holderID: String? = nil, on connection: PostgresConnection) throws {
        let holderID = holderID ?? Self.holderID(for: connection)
        try connection.query("""
            DELETE FROM cutover.runner_lease l
             WHERE l.plan = \(plan) AND (l.holder = \(holderID) OR (l.holder IS NULL AND l.pid = pg_backend_pid()
               AND l.backend_start = (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())))
            """)
    }

    /// The secret a connection's lease is bound to: random for this process, and this
    /// connection's identity within it.
    public static func holderID(for connection: PostgresConnection) -> String {
        "\(processSecret)-\(UInt(bitPattern: ObjectIdentifier(connection).hashValue))"
    }

    private static let processSecret = ReaderRegistry.makeToken().prefix(32)

    /// The session holding `plan`'s lease, if one does.
    public static func holder(plan: String, on connection: PostgresConnection) throws -> Holder? {
        let rows = try connection.query("""
            SELECT l.pid, l.application_name, l.database_role, l.os_user, l.acquired_at
              FROM cutover.runner_lease l WHERE l.plan = \(plan) AND \(unsafeRaw: sessionAlive)
            """)
        guard let row = rows.first else { return nil }
        return Holder(plan: plan, pid: try row.decode(Int32.self, "pid"),
                      applicationName: try row.decode(String.self, "application_name"),
                      databaseRole: try row.decode(String.self, "database_role"),
                      osUser: try row.decode(String.self, "os_user"),
                      since: try row.decode(Date?.self, "acquired_at"))
    }
}

/// Another phase runner is at work on the plan.
public enum RunnerLockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The plan's lease is held by this session (nil when it was given up before it could be named).
    case held(by: RunnerLock.Holder?, plan: String)

    public var description: String {
        switch self {
        case .held(let holder?, let plan):
            "another phase runner is working on plan \(plan): \(holder); try again when it has finished"
        case .held(nil, let plan):
            "another phase runner was working on plan \(plan) a moment ago; try again"
        }
    }
}
