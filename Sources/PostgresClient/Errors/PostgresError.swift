/// An error from PostgreSQL or from talking to it.
///
/// ``code`` says what kind of failure it is; for errors the server reported, ``sqlState`` and the
/// server's fields say the rest. ``description`` is one terse line that never contains parameter
/// values or passwords; ``debugDescription`` adds the server's detail, hint and context, and the
/// SQL text (never its parameters).
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is. The set is closed, as postgres-nio closes `PSQLError`'s:
    /// the named constants are every code there is, and no code can be made outside this package.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case server, connectionFailed, accessDenied, connectionLost, outcomeUnknown, commitRolledBack
            case invalidArgument, invalidConfiguration, poolTimeout, poolClosed, unexpectedResponse
        }

        let base: Base

        private init(_ base: Base) { self.base = base }

        /// A stable name, usable in logs: the constant's name, such as `connectionLost`.
        public var name: String { base.rawValue }
        public var description: String { name }

        /// The server reported an error; ``PostgresError/sqlState`` says which.
        public static let server = Code(.server)
        /// No connection could be established.
        public static let connectionFailed = Code(.connectionFailed)
        /// The server answered but would not let the role in: authentication failed, no such
        /// role or database, no `pg_hba.conf` entry admits it, or the role may not log in.
        /// Trying again will not help until the credentials or the server's rules change.
        public static let accessDenied = Code(.accessDenied)
        /// The connection broke while a command that was not a COMMIT was in flight; that
        /// command and its transaction did not commit.
        public static let connectionLost = Code(.connectionLost)
        /// The connection broke while COMMIT was in flight: the transaction may or may not have
        /// committed. Never retried automatically.
        public static let outcomeUnknown = Code(.outcomeUnknown)
        /// COMMIT was answered with ROLLBACK, because an earlier error in the transaction was
        /// swallowed. Nothing was committed.
        public static let commitRolledBack = Code(.commitRolledBack)
        /// A parameter or the SQL text was refused before anything was sent.
        public static let invalidArgument = Code(.invalidArgument)
        /// The connection string could not be parsed.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// No pooled connection became free within the acquire timeout.
        public static let poolTimeout = Code(.poolTimeout)
        /// The pool has been shut down.
        public static let poolClosed = Code(.poolClosed)
        /// The server answered in a way the client did not expect.
        public static let unexpectedResponse = Code(.unexpectedResponse)
    }

    /// What kind of failure this is.
    public internal(set) var code: Code
    /// The server's SQLSTATE, when the server reported the error. A connection refused while
    /// it started carries one only where libpq's message names it beyond doubt: 40001 for a
    /// start-up that a hot standby's replay cancelled.
    public internal(set) var sqlState: SQLState?
    /// The primary message, one line, passwords redacted.
    public internal(set) var message: String
    /// The server's severity (`ERROR`, `FATAL`, `PANIC`), when it reported one.
    public internal(set) var severity: String?
    /// The server's detail line. May contain row values; not part of ``description``.
    public internal(set) var detail: String?
    /// The server's hint.
    public internal(set) var hint: String?
    /// Where in the server the error arose (PL/pgSQL function, trigger, …).
    public internal(set) var context: String?
    /// The schema of the object involved.
    public internal(set) var schema: String?
    /// The table involved.
    public internal(set) var table: String?
    /// The column involved.
    public internal(set) var column: String?
    /// The constraint involved.
    public internal(set) var constraint: String?
    /// The SQL text that failed, without its parameter values.
    public internal(set) var query: String?

    /// Makes an error; the message should be one line and must not contain parameter values.
    /// Only this package makes errors: an application matches them, it does not forge them.
    package init(code: Code, message: String, sqlState: SQLState? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
    }

    /// True when the connection this error came from can no longer be used.
    public var isConnectionBroken: Bool {
        code == .connectionLost || code == .outcomeUnknown || code == .connectionFailed || code == .accessDenied
    }

    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState.rawValue))" }
        return text
    }

    public var debugDescription: String {
        var lines = ["PostgresError.\(code.name): \(description)"]
        if let severity { lines.append("severity: \(severity)") }
        if let detail { lines.append("detail: \(detail)") }
        if let hint { lines.append("hint: \(hint)") }
        if let context { lines.append("context: \(context)") }
        if let schema { lines.append("schema: \(schema)") }
        if let table { lines.append("table: \(table)") }
        if let column { lines.append("column: \(column)") }
        if let constraint { lines.append("constraint: \(constraint)") }
        if let query { lines.append("query: \(query)") }
        return lines.joined(separator: "\n")
    }
}
