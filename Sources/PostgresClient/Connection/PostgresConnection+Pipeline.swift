internal import CLibPQ

extension PostgresConnection {
    /// Runs one statement in a transaction of its own in a single round trip: the statement
    /// and a Sync travel together in libpq's pipeline mode, and the server runs the statement
    /// in an implicit transaction that it commits at the Sync.
    ///
    /// The outcome is classified as ``withTransaction(isolation:_:)`` classifies it. An error
    /// the server reported for the statement, or for its commit at the Sync (a deferred
    /// constraint), means nothing was committed, and is thrown as it is (a terminated backend's
    /// FATAL during the statement included). A connection that broke before the server answered
    /// the Sync is `outcomeUnknown`: the server may have committed.
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
            // The statement failed before it ran, so nothing committed; prepare it afresh once.
            forgetPreparedStatement(key)
            return try runPipeline(key, binds: query.binds)
        }
    }

    /// With ``PostgresConfiguration/PreparedStatements/perConnection``, the statement is
    /// prepared once per connection; unnamed, it travels as Parse, Bind and Execute before the
    /// one Sync, so that a pooler in transaction mode sees one exchange.
    private func runPipeline(_ key: StatementKey, binds: [PostgresBind]) throws -> PostgresRows {
        let transaction = PipelinedTransaction(connection: self, key: key, binds: binds, name: try preparedStatement(key))
        defer { leavePipeline() }
        try transaction.send(blocking: true)
        while !transaction.advance(waiting: true) {}
        return try transaction.outcome!.get()
    }

    /// Reads to the end of the pipeline, leaves pipeline mode, and rolls back a transaction
    /// left open (none should be: the Sync ends the implicit one); waits for the server as it
    /// needs to.
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
