internal import CLibPQ

extension PostgresConnection {
    /// A transaction isolation level.
    public enum IsolationLevel: String, Sendable {
        /// Each statement sees what was committed before it began (PostgreSQL's default).
        case readCommitted = "READ COMMITTED"
        /// The whole transaction sees one snapshot.
        case repeatableRead = "REPEATABLE READ"
        /// As if transactions ran one after another; expect serialization failures (40001).
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction and commits it, or rolls it back if `body` throws.
    ///
    /// The COMMIT is checked: a COMMIT answered with ROLLBACK (because `body` swallowed an
    /// error) throws `commitRolledBack`; a connection lost while COMMIT was in flight throws
    /// `outcomeUnknown`, which means the transaction may have committed, and is never retried
    /// here. When `body` throws and the ROLLBACK fails too, `body`'s error is the one thrown.
    ///
    /// ```swift
    /// let saved = try connection.withTransaction { connection in
    ///     try connection.query("UPDATE drafts SET revision = revision + 1 WHERE id = \(id)")
    /// }
    /// ```
    ///
    /// - Parameter settings: `SET LOCAL` statements (or any others) sent with `BEGIN` in the
    ///   same exchange, so that settings for the transaction cost no round trip of their own;
    ///   their failure rolls the transaction back and is thrown. Raw SQL: never build it from
    ///   values.
    @discardableResult
    public func withTransaction<T>(isolation: IsolationLevel = .readCommitted, settings unsafeSettings: String? = nil,
                                   _ body: (PostgresConnection) throws -> T) throws -> T {
        guard transactionState == .idle else {
            throw PostgresError(code: .invalidArgument,
                                message: "cannot begin a transaction: the connection is already in one")
        }
        let begin = isolation == .readCommitted ? "BEGIN" : "BEGIN ISOLATION LEVEL \(isolation.rawValue)"
        do {
            try execute(unsafeSQL: unsafeSettings.map { begin + "; " + $0 } ?? begin)
        } catch {
            rollbackAfterFailure()
            throw error
        }
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackAfterFailure()
            throw error
        }
        try commit()
        return value
    }

    /// Sends COMMIT and checks what came back.
    func commit() throws {
        let result = exchange(sending: { PQsendQuery(handle, "COMMIT") }, blocking: { PQexec(handle, "COMMIT") })
        guard let result else { throw outcomeUnknownError(cause: lastErrorMessage()) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK {
            let tag = String(cString: PQcmdStatus(result))
            if tag == "COMMIT" { return }
            if tag == "ROLLBACK" { throw commitRolledBackError() }
            throw PostgresError(code: .unexpectedResponse, message: "COMMIT was answered with \(tag)")
        }
        // The server refused the commit (a deferred constraint, a serialization failure): the
        // transaction is definitely rolled back. Only a broken connection leaves it unknown.
        let failure = error(from: result, sql: "COMMIT")
        if leavesCommitUnknown(failure) { throw outcomeUnknownError(cause: failure.message) }
        throw failure
    }

    /// Whether an error answering COMMIT leaves its outcome unknown: the connection broke (a
    /// FATAL, a broken socket) or a pooler between us and the server reported a connection
    /// failure (SQLSTATE class 08, as PgBouncer does when its server connection dies), rather
    /// than the server refusing the commit.
    func leavesCommitUnknown(_ failure: PostgresError) -> Bool {
        PQstatus(handle) != CONNECTION_OK || failure.code == .connectionLost
            || failure.sqlState?.errorClass == .connectionException
    }

    func commitRolledBackError() -> PostgresError {
        PostgresError(
            code: .commitRolledBack,
            message: "COMMIT was answered with ROLLBACK: an earlier statement in the transaction failed, so nothing was committed")
    }

    func outcomeUnknownError(cause: String) -> PostgresError {
        var error = PostgresError(
            code: .outcomeUnknown,
            message: "the connection was lost while COMMIT was in flight; the transaction may or may not have committed (\(cause))")
        error.query = "COMMIT"
        return error
    }

    /// Rolls back after `body` failed. A failure here is not reported: the caller gets
    /// `body`'s error, and a connection left broken is noticed by its owner.
    private func rollbackAfterFailure() {
        guard PQstatus(handle) == CONNECTION_OK, transactionState != .idle else { return }
        if let result = exchange(sending: { PQsendQuery(handle, "ROLLBACK") }, blocking: { PQexec(handle, "ROLLBACK") }) {
            PQclear(result)
        }
    }
}
