import Foundation
import PostgresClient

/// Tells whether a connection reaches PostgreSQL directly, through a session pooler, or through
/// a pooler that passes server sessions between clients (transaction or statement pooling).
///
/// The runner needs a server session of its own for as long as it runs: its lease names that
/// session, and a step's files and bookkeeping follow one another on it. So ``PhaseRunner``
/// refuses a transaction pooler before it changes anything.
///
/// How it tells:
/// 1. The process ID the server announced at connect time (`BackendKeyData`) is compared with
///    `pg_backend_pid()`. PostgreSQL announces its own; a pooler such as PgBouncer answers the
///    start-up itself and announces a made-up one. Equal means a direct connection (a plain TCP
///    proxy passes the server's announcement through, and is direct as far as sessions go).
/// 2. When they differ, a second client of the same address (the probe) and the runner take
///    turns looking at the server session each is given, five times each: a pooler that hands
///    the runner's session to the probe, or gives the runner another session than its first,
///    passes sessions between clients. One that does neither is taken as a session pooler.
///    Neither holds a transaction open while the other asks, so a small pool cannot deadlock.
///
/// Step 2 is a test of behaviour and can miss under load (another client may take the
/// runner's session just before the probe asks); ``RunnerLock`` keeps two runners from both
/// being admitted even then.
public enum PoolerDetection {
    /// What sits between the client and the server, as far as sessions go.
    public enum Route: Sendable, Equatable, CustomStringConvertible {
        /// The server answered the start-up itself: one server session per connection.
        case direct
        /// A pooler answered the start-up, and kept one server session for this client.
        case sessionPooled
        /// A pooler passes server sessions between clients; `evidence` says what showed it.
        case transactionPooled(evidence: String)

        public var description: String {
            switch self {
            case .direct: "direct"
            case .sessionPooled: "session pooler"
            case .transactionPooled(let evidence): "transaction pooler (\(evidence))"
            }
        }
    }

    /// One server session: its process and when it started.
    private struct ServerSession: Equatable {
        var pid: Int32
        var started: Date?
    }

    /// The route `connection` takes; `openProbe` opens a second client of the same address,
    /// only when a pooler answered.
    public static func route(of connection: PostgresConnection,
                             openProbe: () throws -> PostgresConnection) throws -> Route {
        let runner = try serverSession(on: connection)
        if runner.pid == connection.backendPID { return .direct }
        let probe = try openProbe()
        for _ in 0..<5 {
            if try serverSession(on: probe) == runner {
                return .transactionPooled(evidence: "another client was given the runner's server session, pid \(runner.pid)")
            }
            let now = try serverSession(on: connection)
            if now != runner {
                return .transactionPooled(evidence: "the runner's server session changed from pid \(runner.pid) to pid \(now.pid) between two statements")
            }
        }
        return .sessionPooled
    }

    private static func serverSession(on connection: PostgresConnection) throws -> ServerSession {
        let row = try connection.query("""
            SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()
            """)[0]
        return ServerSession(pid: try row.decode(Int32.self, "pid"), started: try row.decode(Date?.self, "backend_start"))
    }
}

/// The runner was given a connection it cannot work through.
public enum PoolerRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection goes through a pooler that passes server sessions between clients.
    case transactionPooler(evidence: String)
    /// Something between the client and the server refused the runner's start-up settings
    /// (PgBouncer does, unless told to ignore `options`): a pooler, whose mode is unknown.
    case startupSettingsRefused(String)

    public var description: String {
        switch self {
        case .startupSettingsRefused(let message):
            "the runner needs a direct or session-pooled connection, and this one goes through a pooler that refused "
                + "its start-up settings (\(message)); point --database-url at PostgreSQL itself"

        case .transactionPooler(let evidence):
            "the runner needs a direct or session-pooled connection, and this one goes through a transaction pooler "
                + "(\(evidence)); point --database-url at PostgreSQL itself or at a session-mode pool"
        }
    }
}
