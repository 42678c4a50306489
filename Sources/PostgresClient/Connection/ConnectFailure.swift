/// Tells apart why a connection could not be made, from libpq's message.
///
/// libpq gives no SQLSTATE for a connection that failed during its start-up, only its message,
/// so this is the one place that reads that text. The phrases are PostgreSQL's and libpq's own
/// (English; a server or client that translates its messages ends up as `connectionFailed`, the
/// cautious answer: "try again later" rather than "fix the credentials").
enum ConnectFailure {
    /// The code for a connection attempt that ended with `message`.
    ///
    /// - `invalidConfiguration`: a value libpq refused once it looked at it (a port that is not
    ///   a number, an unknown `sslmode`): a mistake in the connection string.
    /// - `accessDenied`: the server answered and would not let the role in: authentication
    ///   failed, no such role or database, no `pg_hba.conf` entry admits it, or the role may not
    ///   log in or connect.
    /// - `connectionFailed`: everything else: no route, refused, timed out, too many connections,
    ///   the server starting up or shutting down.
    static func code(for message: String) -> PostgresError.Code {
        let text = message.lowercased()
        if (text.hasPrefix("invalid ") && text.contains("value")) || text.hasPrefix("invalid port number") {
            return .invalidConfiguration
        }
        if deniedPhrases.contains(where: text.contains) || text.contains(missingRoleOrDatabase) { return .accessDenied }
        return .connectionFailed
    }

    /// The SQLSTATE the server gave a start-up that ended with `message`, for the one case a
    /// caller should retry: a hot standby's replay cancelled the new session's catalog reads
    /// (`canceling statement due to conflict with recovery`, which PostgreSQL reports as 40001
    /// and promotes to FATAL while a session starts). Nil for every other failure.
    static func sqlState(for message: String) -> SQLState? {
        message.lowercased().contains("due to conflict with recovery") ? .serializationFailure : nil
    }

    /// What the server (or libpq, for a password it was asked for and did not have) says when it
    /// refuses to let a role in.
    static let deniedPhrases = [
        "authentication failed for user",       // password, md5, scram-sha-256, peer, ident, ldap, …
        "no pg_hba.conf entry for",
        "pg_hba.conf rejects connection",
        "fe_sendauth: no password supplied",
        "is not permitted to log in",
        "permission denied for database",
    ]

    // Regex is not Sendable; this one is never mutated, and matching does not change it.
    private nonisolated(unsafe) static let missingRoleOrDatabase = #/fatal:\s+(database|role) ".*" does not exist/#
}
