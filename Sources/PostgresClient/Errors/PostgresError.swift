/// An error from PostgreSQL or from talking to it.
///
/// ``code`` says what kind of failure it is; for errors the server reported, ``sqlState`` and the
/// server's fields say the rest. ``description`` is one terse line that never contains parameter
/// values or passwords; ``debugDescription`` adds the server's detail, hint and context, and the
/// SQL text (never its parameters).
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A stable name, usable in logs.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server reported an error; ``PostgresError/sqlState`` says which.
        public static let server = Code(rawValue: "server")
        /// No connection could be established.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The server answered but would not let the role in: authentication failed, no such
        /// role or database, no `pg_hba.conf` entry admits it, or the role may not log in.
        /// Trying again will not help until the credentials or the server's rules change.
        public static let accessDenied = Code(rawValue: "accessDenied")
        /// The connection broke while a command that was not a COMMIT was in flight; that
        /// command and its transaction did not commit.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The connection broke while COMMIT was in flight: the transaction may or may not have
        /// committed. Never retried automatically.
        public static let outcomeUnknown = Code(rawValue: "outcomeUnknown")
        /// COMMIT was answered with ROLLBACK, because an earlier error in the transaction was
        /// swallowed. Nothing was committed.
        public static let commitRolledBack = Code(rawValue: "commitRolledBack")
        /// A parameter or the SQL text was refused before anything was sent.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// The connection string could not be parsed.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// No pooled connection became free within the acquire timeout.
        public static let poolTimeout = Code(rawValue: "poolTimeout")
        /// The pool has been shut down.
        public static let poolClosed = Code(rawValue: "poolClosed")
        /// The server answered in a way the client did not expect.
        public static let unexpectedResponse = Code(rawValue: "unexpectedResponse")
    }

    /// What kind of failure this is.
    public var code: Code
    /// The server's SQLSTATE, when the server reported the error.
    public var sqlState: SQLState?
    /// The primary message, one line, passwords redacted.
    public var message: String
    /// The server's severity (`ERROR`, `FATAL`, `PANIC`), when it reported one.
    public var severity: String?
    /// The server's detail line. May contain row values; not part of ``description``.
    public var detail: String?
    /// The server's hint.
    public var hint: String?
    /// Where in the server the error arose (PL/pgSQL function, trigger, …).
    public var context: String?
    /// The schema of the object involved.
    public var schema: String?
    /// The table involved.
    public var table: String?
    /// The column involved.
    public var column: String?
    /// The constraint involved.
    public var constraint: String?
    /// The SQL text that failed, without its parameter values.
    public var query: String?

    /// Makes an error; the message should be one line and must not contain parameter values.
    public init(code: Code, message: String, sqlState: SQLState? = nil) {
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
        var lines = ["PostgresError.\(code.rawValue): \(description)"]
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
