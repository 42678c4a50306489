import PostgresClient

/// Ends PostgreSQL server sessions as an administrator would (`pg_terminate_backend`), so that
/// their clients see the connection break: the fault a restart, a failover or a killed backend
/// causes.
///
/// ```swift
/// let ended = try BackendTerminator.terminate(applicationNameLike: "soak-app-%", on: admin)
/// ```
package enum BackendTerminator {
    /// Terminates at most `limit` sessions of the connection's database whose
    /// `application_name` is LIKE `pattern`, chosen at random, never the connection's own.
    ///
    /// - Parameter wait: how long to wait for each to end; nil sends the signal and returns.
    /// - Returns: how many were signalled (or, with `wait`, ended within it).
    @discardableResult
    package static func terminate(applicationNameLike pattern: String, limit: Int = 1, waitingUpTo wait: Duration? = nil,
                                  on connection: PostgresConnection) throws -> Int {
        let milliseconds = wait.map { $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000 } ?? 0
        return try connection.query("""
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, \(milliseconds))) AS n FROM (
                SELECT pid FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name LIKE \(pattern) AND pid <> pg_backend_pid()
                 ORDER BY random() LIMIT \(Int64(limit))) chosen
            """)[0].decode(Int.self, "n")
    }
}
