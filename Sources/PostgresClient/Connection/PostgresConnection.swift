internal import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a PostgreSQL server, driven synchronously.
///
/// Every call blocks its thread until the server answers, so a connection belongs to one
/// thread at a time and is deliberately not `Sendable`. Async code uses ``PostgresPool``, which
/// runs each connection on a thread of its own and never blocks Swift's cooperative pool.
///
/// ```swift
/// let connection = try PostgresConnection(configuration: .init(connectionString: url))
/// let rows = try connection.query("SELECT revision FROM drafts WHERE id = \(draftID)")
/// ```
public final class PostgresConnection {
    /// Where this connection goes.
    public let configuration: PostgresConfiguration

    /// The PGconn. Owned by this object and freed in `deinit`.
    let handle: OpaquePointer
    private let notices = NoticeSink()
    /// Each prepared statement's name, as the C string libpq takes (kept so, because a Swift
    /// string passed to C is copied into a new buffer on every call). Empty unless the
    /// configuration asks for ``PostgresConfiguration/PreparedStatements/perConnection``.
    private var statementNames: [StatementKey: [CChar]] = [:]
    /// Whether statements are prepared and cached, rather than sent unnamed.
    private let preparesStatements: Bool
    /// The start of this connection's statement names, random, so that a statement of another
    /// connection that a pooler put on the same server connection can never be run by mistake
    /// for one of ours: a missing name fails, where a shared one would run the wrong statement.
    private let statementNamePrefix: String
    private var nextStatementNumber = 0
    private let knownPasswords: [String]
    /// Set when the server did not answer within the response timeout and the connection was cut.
    var responseTimedOut: Duration?
    /// Cancels this connection's statement in flight from any thread; made once, when the
    /// connection is made.
    public let canceller: PostgresCanceller

    /// Prepared statements kept per connection; past this, statements run unprepared so that
    /// ad-hoc SQL cannot grow the server's memory without bound.
    static let statementCacheLimit = 256

    /// Connects, or throws ``PostgresError`` with code `connectionFailed` or
    /// `invalidConfiguration`. The message never contains a password.
    public init(configuration: PostgresConfiguration = PostgresConfiguration()) throws {
        self.configuration = configuration
        self.knownPasswords = configuration.knownPasswords
        self.preparesStatements = configuration.preparedStatements == .perConnection
        self.statementNamePrefix = "cutover_" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + "_"
        try configuration.validate()
        let pairs = configuration.keywordValuePairs
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection: OpaquePointer? = (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { k in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let connection else {
            throw PostgresError(code: .connectionFailed, message: "could not connect: libpq is out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = String(cString: PQerrorMessage(connection)).trimmingWhitespace()
            PQfinish(connection)
            // libpq checks some values (an unknown sslmode) only when it connects: those are
            // mistakes in the configuration, not an unreachable server.
            let code = ConnectFailure.code(for: reason)
            throw PostgresError(
                code: code,
                message: PasswordRedaction.redact((code == .invalidConfiguration ? "invalid connection string: " : "could not connect to PostgreSQL: ")
                                                  + Self.oneLine(reason),
                                                  knownPasswords: knownPasswords),
                sqlState: ConnectFailure.sqlState(for: reason))
        }
        handle = connection
        canceller = PostgresCanceller(connection: connection)
        PQsetNoticeProcessor(handle, { context, message in
            guard let context, let message else { return }
            Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
                .receive(String(cString: message).trimmingWhitespace())
        }, Unmanaged.passUnretained(notices).toOpaque())
        // Timestamps are parsed in the ISO style, every server's default. A session SET would
        // stay on the server connection for a pooler's next client, so it is made only for a
        // server or role set to another style (PgBouncer tracks DateStyle and restores each
        // client's own).
        if let style = parameterStatus("DateStyle"), !style.hasPrefix("ISO") {
            _ = try execute(unsafeSQL: "SET DateStyle = 'ISO, MDY'")
        }
    }

    deinit {
        PQfinish(handle)
    }

    // MARK: State

    /// Called with each NOTICE or WARNING the server sends; by default they are dropped.
    public var noticeHandler: ((String) -> Void)? {
        get { notices.handler }
        set { notices.handler = newValue }
    }

    /// A setting the server reports to the client (`server_version`, `DateStyle`,
    /// `TimeZone`, `application_name`, …), as last reported; nil when it reported none.
    public func parameterStatus(_ name: String) -> String? {
        PQparameterStatus(handle, name).map { String(cString: $0) }
    }

    /// The server process serving this connection (`pg_backend_pid()`). Through a pooler in
    /// transaction mode, the pooler's answer for the connection it opened with, not the
    /// process that runs the next statement.
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// The server's version as a number, e.g. 150018 for 15.18.
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// False once libpq knows the connection is broken.
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Where the connection stands with respect to transactions.
    public var transactionState: TransactionState {
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: .idle
        case PQTRANS_INTRANS: .inTransaction
        case PQTRANS_INERROR: .failedTransaction
        case PQTRANS_ACTIVE: .busy
        default: .unknown
        }
    }

    /// A connection's transaction state.
    public enum TransactionState: Sendable, Equatable {
        /// Not in a transaction.
        case idle
        /// In a transaction that can still commit.
        case inTransaction
        /// In a transaction that failed; only ROLLBACK will be accepted.
        case failedTransaction
        /// A command is in progress.
        case busy
        /// The connection is broken.
        case unknown
    }

    /// Checks without a round trip that the server has not closed the connection: reads
    /// whatever the server sent meanwhile (a termination notice, notifications, the end of the
    /// stream) and reports whether the connection is still good and outside a transaction.
    public func checkHealth() -> Bool {
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        // A terminated backend sends its FATAL message and then closes: the first read takes the
        // message, and only a later read sees the end of the stream. Keep reading while the
        // socket says there is more, a bounded number of times.
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        for _ in 0..<16 {
            descriptor.revents = 0
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            guard PQconsumeInput(handle) == 1 else { return false }
        }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Reads what the server has sent without blocking; false when the connection broke.
    func consumeInput() -> Bool {
        PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    /// The socket's file descriptor, for polling.
    var socket: Int32 { PQsocket(handle) }

    // MARK: Queries

    /// Runs one statement with bound parameters: unnamed, in one exchange, or prepared once
    /// per connection and reused, as ``PostgresConfiguration/preparedStatements`` says.
    ///
    /// - Throws: ``PostgresError``; `invalidArgument` when the SQL or a parameter contains a
    ///   NUL character, and then nothing is sent.
    @discardableResult
    public func query(_ query: PostgresQuery) throws -> PostgresRows {
        let key = try prepareText(of: query)
        do {
            return try runPrepared(key, binds: query.binds)
        } catch let error as PostgresError where isStalePreparedStatement(error) {
            // The server no longer has the statement (DISCARD ALL by a pooler) or its plan's
            // result type changed after DDL. Outside a transaction, prepare it afresh once.
            forgetPreparedStatement(key)
            guard transactionState == .idle else { throw error }
            return try runPrepared(key, binds: query.binds)
        }
    }

    /// Runs SQL text as it is, through the simple query protocol: several statements may be
    /// separated by semicolons, and no parameters can be bound. Returns the last result.
    ///
    /// Use it for schema files and session commands, never with text built from input.
    @discardableResult
    public func execute(unsafeSQL sql: String) throws -> PostgresRows {
        try Self.refuseNUL(sql: sql, binds: [])
        return try rows(from: exchange(sending: { PQsendQuery(handle, sql) }, blocking: { PQexec(handle, sql) }), sql: sql)
    }

    /// Quotes an identifier with libpq's escaping: `drafts` becomes `"drafts"`.
    public func quoteIdentifier(_ name: String) throws -> String {
        guard !name.contains("\u{0}") else {
            throw PostgresError(code: .invalidArgument, message: "an identifier contains a NUL character")
        }
        guard let quoted = PQescapeIdentifier(handle, name, name.utf8.count) else {
            throw PostgresError(code: .invalidArgument,
                                message: "cannot quote identifier: " + lastErrorMessage())
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Takes the notifications that have arrived, oldest first, without waiting.
    public func takeNotifications() -> [PostgresNotification] {
        var result: [PostgresNotification] = []
        while let notify = PQnotifies(handle) {
            result.append(PostgresNotification(channel: String(cString: notify.pointee.relname),
                                               payload: String(cString: notify.pointee.extra),
                                               backendPID: notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return result
    }

    private func runPrepared(_ key: StatementKey, binds: [PostgresBind]) throws -> PostgresRows {
        let name = try preparedStatement(key)
        let result: OpaquePointer? = withParameterArrays(binds) { parameters in
            if let name {
                exchange(sending: {
                    PQsendQueryPrepared(handle, name, parameters.count, parameters.values, parameters.lengths,
                                        parameters.formats, 0)
                }, blocking: {
                    PQexecPrepared(handle, name, parameters.count, parameters.values, parameters.lengths,
                                   parameters.formats, 0)
                })
            } else {
                exchange(sending: {
                    PQsendQueryParams(handle, key.sql, parameters.count, key.types, parameters.values, parameters.lengths,
                                      parameters.formats, 0)
                }, blocking: {
                    PQexecParams(handle, key.sql, parameters.count, key.types, parameters.values, parameters.lengths,
                                 parameters.formats, 0)
                })
            }
        }
        return try rows(from: result, sql: key.sql, binds: binds)
    }

    /// The name of the statement prepared for `key`, preparing it now if needed; nil when
    /// statements are sent unnamed, or the cache is full and this one should be.
    func preparedStatement(_ key: StatementKey) throws -> [CChar]? {
        guard preparesStatements else { return nil }
        if let name = statementNames[key] { return name }
        guard statementNames.count < Self.statementCacheLimit else { return nil }
        let name = Array((statementNamePrefix + String(nextStatementNumber)).utf8CString)
        nextStatementNumber += 1
        _ = try rows(from: exchange(sending: { PQsendPrepare(handle, name, key.sql, Int32(key.types.count), key.types) },
                                    blocking: { PQprepare(handle, name, key.sql, Int32(key.types.count), key.types) }),
                     sql: key.sql)
        statementNames[key] = name
        return name
    }

    /// The name prepared for `key` without preparing it: `.some(nil)` when it runs unnamed
    /// (by configuration, or because the cache is full), nil when it still has to be prepared.
    func preparedStatementWithoutPreparing(_ key: StatementKey) -> [CChar]?? {
        guard preparesStatements else { return .some(nil) }
        if let name = statementNames[key] { return .some(name) }
        return statementNames.count < Self.statementCacheLimit ? nil : .some(nil)
    }

    /// Forgets a prepared statement the server no longer has.
    func forgetPreparedStatement(_ key: StatementKey) {
        statementNames[key] = nil
    }

    /// A statement as the per-connection cache knows it: its text and its parameters' types.
    struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    func isStalePreparedStatement(_ error: PostgresError) -> Bool {
        error.sqlState == .invalidSQLStatementName
            || (error.sqlState == .featureNotSupported && error.message.contains("cached plan"))
    }

    // MARK: Results

    /// Copies a PGresult into Swift values and frees it, or turns it into an error.
    func rows(from result: OpaquePointer?, sql: String, binds: [PostgresBind] = []) throws -> PostgresRows {
        guard let result else { throw connectionError(sql: sql) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return Self.copyRows(result)
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            throw error(from: result, sql: sql, binds: binds)
        default:
            let status = String(cString: PQresStatus(PQresultStatus(result)))
            var error = PostgresError(code: .unexpectedResponse, message: "unexpected result status \(status)")
            error.query = sql
            throw error
        }
    }

    /// Copies a successful PGresult into Swift values (without freeing it).
    static func copyRows(_ result: OpaquePointer) -> PostgresRows {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns: [PostgresColumn] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            columns.append(PostgresColumn(name: String(cString: PQfname(result, Int32(column))),
                                          type: PostgresDataType(rawValue: UInt32(PQftype(result, Int32(column))))))
        }
        var cells: [String?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) == 1 {
                    cells.append(nil)
                } else {
                    cells.append(String(cString: PQgetvalue(result, row, column)))
                }
            }
        }
        let tag = String(cString: PQcmdStatus(result))
        let affected = String(cString: PQcmdTuples(result))
        return PostgresRows(columns: columns, cells: cells, commandTag: tag, affectedRows: Int(affected))
    }

    /// The server's error fields, or a connection error when the connection broke.
    func error(from result: OpaquePointer, sql: String?, binds: [PostgresBind] = []) -> PostgresError {
        func field(_ code: Int32) -> String? {
            guard let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        let state = field(CUTOVER_PG_DIAG_SQLSTATE).map(SQLState.init(rawValue:))
        let primary = field(CUTOVER_PG_DIAG_MESSAGE_PRIMARY)
            ?? String(cString: PQresultErrorMessage(result)).trimmingWhitespace()
        // A FATAL error ends the session even if libpq has not yet read the end of the stream.
        let severity = field(CUTOVER_PG_DIAG_SEVERITY)
        let broken = PQstatus(handle) != CONNECTION_OK || severity == "FATAL" || severity == "PANIC"
        let code: PostgresError.Code = broken ? .connectionLost : (state == nil ? .unexpectedResponse : .server)
        let message = Self.maskValues(in: redact(Self.oneLine(primary.isEmpty ? lastErrorMessage() : primary)),
                                      sqlState: state, binds: binds)
        var error = PostgresError(code: code, message: message, sqlState: state)
        error.severity = severity
        error.detail = field(CUTOVER_PG_DIAG_MESSAGE_DETAIL).map(redact)
        error.hint = field(CUTOVER_PG_DIAG_MESSAGE_HINT)
        error.context = field(CUTOVER_PG_DIAG_CONTEXT)
        error.schema = field(CUTOVER_PG_DIAG_SCHEMA_NAME)
        error.table = field(CUTOVER_PG_DIAG_TABLE_NAME)
        error.column = field(CUTOVER_PG_DIAG_COLUMN_NAME)
        error.constraint = field(CUTOVER_PG_DIAG_CONSTRAINT_NAME)
        error.query = sql.map(redact)
        return error
    }

    /// The error for a command that got no result at all: the connection broke.
    func connectionError(sql: String?) -> PostgresError {
        var error = PostgresError(code: .connectionLost,
                                  message: "connection to the server was lost: " + Self.oneLine(lastErrorMessage()))
        error.query = sql.map(redact)
        return error
    }

    func lastErrorMessage() -> String {
        if let limit = responseTimedOut {
            return "the server did not answer within \(limit); the connection was closed"
        }
        return redact(String(cString: PQerrorMessage(handle)).trimmingWhitespace())
    }

    private func redact(_ text: String) -> String {
        PasswordRedaction.redact(text, knownPasswords: knownPasswords)
    }

    /// Removes values from a server message, so that an error's description never carries a
    /// parameter: a data exception (class 22) quotes the offending input in double quotes, and
    /// any quoted text equal to a bound parameter is masked whatever the class.
    static func maskValues(in message: String, sqlState: SQLState?, binds: [PostgresBind]) -> String {
        var masked = message
        for value in binds.compactMap(\.text) where !value.isEmpty {
            masked.replace("\"" + value + "\"", with: "\"[value]\"")
        }
        if sqlState?.errorClass == .dataException {
            masked.replace(#/"(?:[^"]|"")*"/#, with: "\"[value]\"")
        }
        return masked
    }

    /// libpq's messages may span lines; errors are one line first.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }
}

/// A notification delivered by NOTIFY or `pg_notify`.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel it was sent on.
    public var channel: String
    /// Its payload; empty when none was given.
    public var payload: String
    /// The server process of the session that sent it.
    public var backendPID: Int32
}

/// Receives libpq's notices for one connection. Only touched on the connection's thread.
private final class NoticeSink {
    var handler: ((String) -> Void)?
    func receive(_ message: String) { handler?(message) }
}
