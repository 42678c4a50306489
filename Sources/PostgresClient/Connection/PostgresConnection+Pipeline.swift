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
            forgetPipelineStatements(key)
            return try runPipeline(key, binds: query.binds)
        }
    }

    /// With ``PostgresConfiguration/PreparedStatements/perConnection``, BEGIN and COMMIT are
    /// prepared once per connection like the statement, so that the server does not parse them
    /// again for every transaction; unnamed, all three travel as Parse, Bind and Execute, and
    /// only one Sync ends the pipeline, so that a pooler in transaction mode keeps the three on
    /// one server connection.
    static let beginKey = StatementKey(sql: "BEGIN", types: [])
    static let commitKey = StatementKey(sql: "COMMIT", types: [])

    private func runPipeline(_ key: StatementKey, binds: [PostgresBind]) throws -> PostgresRows {
        let names = PipelinedTransaction.StatementNames(begin: try preparedStatement(Self.beginKey),
                                                        statement: try preparedStatement(key),
                                                        commit: try preparedStatement(Self.commitKey))
        let transaction = PipelinedTransaction(connection: self, key: key, binds: binds, names: names)
        defer { leavePipeline() }
        try transaction.send(blocking: true)
        while !transaction.advance(waiting: true) {}
        return try transaction.outcome!.get()
    }

    /// The prepared names for a pipelined transaction of `key`, if all three are ready to use
    /// without a round trip (prepared already, or to run unprepared because the cache is full).
    func pipelineNamesWithoutPreparing(_ key: StatementKey) -> PipelinedTransaction.StatementNames? {
        if let last = lastPipelineNames, last.key == key { return last.names }
        guard let begin = preparedStatementWithoutPreparing(Self.beginKey),
              let statement = preparedStatementWithoutPreparing(key),
              let commit = preparedStatementWithoutPreparing(Self.commitKey) else { return nil }
        let names = PipelinedTransaction.StatementNames(begin: begin, statement: statement, commit: commit)
        if begin != nil, statement != nil, commit != nil { lastPipelineNames = (key, names) }
        return names
    }

    /// Forgets the statements of a pipelined transaction that failed because the server no
    /// longer had one of them.
    func forgetPipelineStatements(_ key: StatementKey) {
        for stale in [key, Self.beginKey, Self.commitKey] { forgetPreparedStatement(stale) }
    }

    /// Reads to the end of the pipeline, leaves pipeline mode, and rolls back a transaction
    /// that an error left open; waits for the server as it needs to.
    func leavePipeline() {
        if PQisnonblocking(handle) == 1 { _ = PQsetnonblocking(handle, 0) }
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
