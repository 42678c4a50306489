import PostgresClient

/// What a server connection still holds from the sessions before, as the next client of a
/// pooler sees it: the state a transaction pooler would hand from one client to another.
///
/// Probe through a ``PgBouncerProcess`` whose pool has one server connection, so that the
/// probe runs on the very connection the clients before it used.
public struct SessionLeftovers: Sendable, Equatable, CustomStringConvertible {
    /// Settings whose source is `session` (a `SET` that outlived its transaction), by name.
    /// `application_name` is left out: PgBouncer sets it for each client itself.
    public var settings: [String]
    /// Statements prepared by name (`pg_prepared_statements`).
    public var preparedStatements: [String]
    /// Channels the server connection LISTENs on.
    public var listeningChannels: [String]
    /// Advisory locks held at session level.
    public var advisoryLocks: Int

    /// Nothing left behind.
    public static let none = SessionLeftovers(settings: [], preparedStatements: [], listeningChannels: [], advisoryLocks: 0)

    /// Each kind of leftover.
    public init(settings: [String], preparedStatements: [String], listeningChannels: [String], advisoryLocks: Int) {
        self.settings = settings
        self.preparedStatements = preparedStatements
        self.listeningChannels = listeningChannels
        self.advisoryLocks = advisoryLocks
    }

    public var description: String {
        "settings \(settings), prepared statements \(preparedStatements), listening on \(listeningChannels), \(advisoryLocks) advisory locks"
    }

    /// Connects with `connectionString` and reads what its server connection holds, in one
    /// statement so that a transaction pooler answers it from one server connection.
    /// Blocking: call it from a thread of its own.
    public static func probe(through connectionString: String) throws -> SessionLeftovers {
        let probe = try PostgresConnection(configuration: .init(connectionString: connectionString,
                                                                applicationName: "cutover-leftovers-probe"))
        let row = try probe.execute(unsafeSQL: """
            SELECT (SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM pg_settings
                    WHERE source = 'session' AND name <> 'application_name') AS settings,
                   (SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM pg_prepared_statements) AS prepared,
                   (SELECT coalesce(string_agg(c, ',' ORDER BY c), '') FROM pg_listening_channels() AS c) AS channels,
                   (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory') AS locks
            """)[0]
        func list(_ column: String) throws -> [String] {
            try row.decode(String.self, column).split(separator: ",").map(String.init)
        }
        return SessionLeftovers(settings: try list("settings"), preparedStatements: try list("prepared"),
                                listeningChannels: try list("channels"), advisoryLocks: try row.decode(Int.self, "locks"))
    }
}
