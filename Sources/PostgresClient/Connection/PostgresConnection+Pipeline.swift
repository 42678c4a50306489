internal import CLibPQ

extension PostgresConnection {
    /// Runs one statement in a transaction of its own in a single round trip: BEGIN, the
    /// statement and COMMIT travel together in libpq's pipeline mode.
    ///
    /// The outcome is classified as ``withTransaction(isolation:_:)`` classifies it. An error
    /// the server reported for BEGIN or the statement means nothing was committed, and is
    /// thrown as it is (a terminated backend's FATAL included). A COMMIT answered with ROLLBACK
    /// is `commitRolledBack`. A connection that broke before the server answered the statement
    /// or the COMMIT is `outcomeUnknown`: the server may have run all three.
    ///
    /// ```swift
    /// let rows = try connection.pipelinedTransaction("SELECT * FROM cutover.save_draft(\(scope), …)")
    /// ```
    public func pipelinedTransaction(_ query: PostgresQuery) throws -> PostgresRows {
        guard transactionState == .idle else {
            throw PostgresError(code: .invalidArgument,
                                message: "cannot begin a transaction: the connection is already in one")
        }
        let key = try prepareText(of: query)
        do {
            return try runPipeline(key, binds: query.binds)
        } catch let error as PostgresError where isStalePreparedStatement(error) && isConnected {
            // One of the three failed before anything could commit (a prepared COMMIT that is
            // gone fails before it runs, and the transaction rolls back); prepare them afresh once.
            for stale in [key, Self.beginKey, Self.commitKey] { forgetPreparedStatement(stale) }
            return try runPipeline(key, binds: query.binds)
        }
    }

    /// BEGIN and COMMIT are prepared once per connection like the statement, so that the server
    /// does not parse them again for every transaction.
    private static let beginKey = StatementKey(sql: "BEGIN", types: [])
    private static let commitKey = StatementKey(sql: "COMMIT", types: [])

    private func runPipeline(_ key: StatementKey, binds: [PostgresBind]) throws -> PostgresRows {
        let (sql, types) = (key.sql, key.types)
        let name = try preparedStatement(key)
        let begin = try preparedStatement(Self.beginKey)
        let commit = try preparedStatement(Self.commitKey)
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(code: .unexpectedResponse, message: "cannot enter pipeline mode: " + lastErrorMessage())
        }
        defer { leavePipeline() }

        let sentStatement = sendWithoutParameters(Self.beginKey.sql, prepared: begin)
            && withParameterValues(binds, { values in
                if let name {
                    PQsendQueryPrepared(handle, name, Int32(binds.count), values, nil, nil, 0)
                } else {
                    PQsendQueryParams(handle, sql, Int32(binds.count), types, values, nil, nil, 0)
                }
            }) == 1
        // Without a COMMIT the server cannot commit, so a failure this early is definite.
        guard sentStatement else { throw connectionError(sql: sql) }
        guard sendWithoutParameters(Self.commitKey.sql, prepared: commit), PQpipelineSync(handle) == 1 else {
            throw outcomeUnknownError(cause: lastErrorMessage())
        }

        // BEGIN
        switch readPipelineResult(sql: "BEGIN", keepingRows: false) {
        case .rows: break
        case .refused(let error): throw error
        case .lost(let cause): throw outcomeUnknownError(cause: cause)
        }
        // The statement
        let rows: PostgresRows
        switch readPipelineResult(sql: sql, binds: binds, keepingRows: true) {
        case .rows(let result): rows = result
        case .refused(let error): throw error
        case .lost(let cause): throw outcomeUnknownError(cause: cause)
        }
        // COMMIT
        switch readPipelineResult(sql: "COMMIT", keepingRows: false) {
        case .rows(let result):
            if result.commandTag == "COMMIT" { return rows }
            if result.commandTag == "ROLLBACK" { throw commitRolledBackError() }
            throw PostgresError(code: .unexpectedResponse, message: "COMMIT was answered with \(result.commandTag)")
        case .refused(let error) where isConnected:
            throw error
        case .refused(let error):
            throw outcomeUnknownError(cause: error.message)
        case .lost(let cause):
            throw outcomeUnknownError(cause: cause)
        }
    }

    /// Queues a statement without parameters: its prepared name when it has one.
    private func sendWithoutParameters(_ sql: String, prepared name: String?) -> Bool {
        if let name { return PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 0) == 1 }
        return PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1
    }

    private enum PipelineResult {
        /// The command succeeded.
        case rows(PostgresRows)
        /// The server reported an error for this command: it did not take effect.
        case refused(PostgresError)
        /// No answer from the server: the connection broke.
        case lost(String)
    }

    /// Reads the next command's result and the NULL that ends it; without `keepingRows`, only
    /// its command tag is copied out.
    private func readPipelineResult(sql: String, binds: [PostgresBind] = [], keepingRows: Bool) -> PipelineResult {
        guard let result = PQgetResult(handle) else { return .lost(lastErrorMessage()) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status != PGRES_PIPELINE_SYNC {
            while PQstatus(handle) == CONNECTION_OK, let extra = PQgetResult(handle) { PQclear(extra) }
        }
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return .rows(keepingRows ? Self.copyRows(result)
                                     : PostgresRows(columns: [], cells: [], commandTag: String(cString: PQcmdStatus(result)),
                                                    affectedRows: nil))
        case PGRES_PIPELINE_ABORTED:
            return .refused(PostgresError(code: .unexpectedResponse,
                                          message: "the command was skipped because an earlier one in the pipeline failed"))
        default:
            let failure = error(from: result, sql: sql, binds: binds)
            // libpq's own report of a broken connection carries no SQLSTATE; anything with
            // one was said by the server about this command.
            return failure.sqlState == nil && failure.code != .server ? .lost(failure.message) : .refused(failure)
        }
    }

    /// Reads to the end of the pipeline, leaves pipeline mode, and rolls back a transaction
    /// that an error left open.
    private func leavePipeline() {
        while PQstatus(handle) == CONNECTION_OK, PQpipelineStatus(handle) != PQ_PIPELINE_OFF {
            guard let result = PQgetResult(handle) else {
                if PQexitPipelineMode(handle) == 1 { break }
                continue
            }
            PQclear(result)
        }
        if PQstatus(handle) == CONNECTION_OK, PQpipelineStatus(handle) != PQ_PIPELINE_OFF {
            _ = PQexitPipelineMode(handle)
        }
        if PQstatus(handle) == CONNECTION_OK, transactionState == .failedTransaction || transactionState == .inTransaction {
            if let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
        }
    }
}
