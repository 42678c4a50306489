internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// Runs a transaction in two exchanges with the server: `BEGIN`, `settings` and `opening`
    /// travel together in the first; the statements `body` returns to close the transaction,
    /// and `COMMIT`, in the second (libpq's pipeline mode, each exchange ending with one Sync).
    ///
    /// `body` gets `opening`'s rows and returns the transaction's value and the statements
    /// that close it, which may be built from those rows. A transaction of a statement, a few
    /// bookkeeping updates and COMMIT costs two round trips instead of one for each statement.
    ///
    /// The outcome is classified as ``withTransaction(isolation:settings:_:)`` classifies it:
    /// - a setting, `opening` or a closing statement the server refuses is thrown as it is,
    ///   after the transaction is rolled back (the server skipped the statements after it);
    /// - `body` throwing rolls the transaction back and its error is thrown;
    /// - a COMMIT answered with ROLLBACK throws `commitRolledBack`; one the server refuses (a
    ///   deferred constraint) is thrown as it is, and nothing was committed;
    /// - a connection lost during the first exchange, or one the server ended (a FATAL) in
    ///   answer to a statement before COMMIT, is a broken connection, with nothing committed;
    ///   lost without an answer once any closing statement was queued, or in answer to COMMIT,
    ///   `outcomeUnknown`: the server runs COMMIT as soon as it reads it, so the transaction
    ///   may have committed.
    ///
    /// ```swift
    /// let moved = try connection.pipelinedTransaction(
    ///     settings: ["SET LOCAL lock_timeout = '10ms'"],
    ///     opening: "UPDATE jobs SET state = 'done' WHERE id = \(id) RETURNING id") { rows in
    ///         (rows.count, ["INSERT INTO job_log (id) VALUES (\(id))"])
    ///     }
    /// ```
    ///
    /// - Parameter settings: statements sent after `BEGIN` in the first exchange, each on its
    ///   own (`SET LOCAL …`). Raw SQL: never build it from values.
    @discardableResult
    public func pipelinedTransaction<T>(settings unsafeSettings: [String] = [], opening: PostgresQuery,
                                        _ body: (PostgresRows) throws -> (value: T, closing: [PostgresQuery])) throws -> T {
        guard transactionState == .idle else {
            throw PostgresError(code: .invalidArgument,
                                message: "cannot begin a transaction: the connection is already in one")
        }
        let first = [PipelineStatement(unsafeSQL: "BEGIN")] + unsafeSettings.map(PipelineStatement.init(unsafeSQL:))
            + [try PipelineStatement(opening, on: self)]
        let openingRows: PostgresRows
        do {
            switch runPipeline(first) {
            case .answered(let rows): openingRows = rows[rows.count - 1]
            case .refused(let error, _), .lost(let error, _): throw error
            }
        } catch {
            rollbackAfterFailure()
            throw error
        }
        let value: T
        let closing: [PipelineStatement]
        do {
            let made = try body(openingRows)
            value = made.value
            closing = try made.closing.map { try PipelineStatement($0, on: self) } + [PipelineStatement(unsafeSQL: "COMMIT")]
        } catch {
            rollbackAfterFailure()
            throw error
        }
        switch runPipeline(closing) {
        case .answered(let rows):
            let tag = rows[rows.count - 1].commandTag
            if tag == "COMMIT" { return value }
            if tag == "ROLLBACK" { throw commitRolledBackError() }
            throw PostgresError(code: .unexpectedResponse, message: "COMMIT was answered with \(tag)")
        case .refused(let error, let index):
            // COMMIT's own failure leaves its outcome unknown when the connection broke under it,
            // as ``commit()`` judges it; any other refusal means nothing was committed: the
            // server answers in order, so a statement before COMMIT that failed (a FATAL
            // included) was the last it ran.
            if index == closing.count - 1 && leavesCommitUnknown(error) { throw outcomeUnknownError(cause: error.message) }
            rollbackAfterFailure()
            throw error
        case .lost(let error, let isAnythingQueued):
            guard isAnythingQueued else {
                rollbackAfterFailure()
                throw error
            }
            throw outcomeUnknownError(cause: error.message)
        }
    }

    /// One statement of a pipeline: its text, parameter types and values, and its prepared
    /// name when the connection prepares statements.
    private struct PipelineStatement {
        let key: StatementKey
        let binds: [PostgresBind]
        let name: [CChar]?

        init(unsafeSQL sql: String) {
            key = StatementKey(sql: sql, types: [])
            binds = []
            name = nil
        }

        /// Renders and checks `query`, and prepares it first when the connection prepares
        /// statements (outside the pipeline, which must hold only the statements themselves).
        init(_ query: PostgresQuery, on connection: PostgresConnection) throws {
            key = try connection.prepareText(of: query)
            binds = query.binds
            name = try connection.preparedStatement(key)
        }
    }

    /// How a pipeline ended.
    private enum PipelineResult {
        /// Every statement succeeded, and the Sync came back: each one's rows, in order.
        case answered([PostgresRows])
        /// The server reported this error for the statement at `index`; it skipped the ones
        /// after it.
        case refused(PostgresError, index: Int)
        /// The connection broke; `isAnythingQueued` says whether any statement had been queued.
        case lost(PostgresError, isAnythingQueued: Bool)
    }

    /// Sends `statements` and one Sync in pipeline mode, reads every answer, and leaves
    /// pipeline mode. A transaction block stays as the statements left it; the caller rolls
    /// back. Waits no longer than ``PostgresConfiguration/responseTimeout`` from the start.
    private func runPipeline(_ statements: [PipelineStatement]) -> PipelineResult {
        let deadline = configuration.responseTimeout.map { ContinuousClock.now + $0 }
        guard PQenterPipelineMode(handle) == 1 else {
            return .refused(PostgresError(code: .unexpectedResponse, message: "cannot enter pipeline mode: " + lastErrorMessage()),
                            index: 0)
        }
        defer { drainPipeline() }
        for (index, statement) in statements.enumerated() {
            let queued = withParameterArrays(statement.binds) { parameters in
                if let name = statement.name {
                    PQsendQueryPrepared(handle, name, parameters.count, parameters.values, parameters.lengths,
                                        parameters.formats, 0)
                } else {
                    PQsendQueryParams(handle, statement.key.sql, parameters.count, statement.key.types, parameters.values,
                                      parameters.lengths, parameters.formats, 0)
                }
            } == 1
            guard queued else { return .lost(connectionError(sql: statement.key.sql), isAnythingQueued: index > 0) }
        }
        guard PQpipelineSync(handle) == 1 else { return .lost(connectionError(sql: nil), isAnythingQueued: true) }
        var rows: [PostgresRows] = []
        var refusal: (error: PostgresError, index: Int)?
        for (index, statement) in statements.enumerated() {
            guard let result = nextResult(until: deadline) else {
                return .lost(connectionError(sql: statement.key.sql), isAnythingQueued: true)
            }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                rows.append(Self.copyRows(result))
                PQclear(result)
            case PGRES_PIPELINE_ABORTED:
                // Skipped after an earlier statement failed; that failure is the one reported.
                PQclear(result)
            default:
                let failure = error(from: result, sql: statement.key.sql, binds: statement.binds)
                PQclear(result)
                // libpq's own report of a broken connection carries no SQLSTATE.
                if failure.sqlState == nil && failure.code != .server { return .lost(failure, isAnythingQueued: true) }
                refusal = refusal ?? (failure, index)
            }
            // The NULL that ends the statement's results.
            while let extra = nextResult(until: deadline) { PQclear(extra) }
            guard PQstatus(handle) == CONNECTION_OK else {
                return .lost(connectionError(sql: statement.key.sql), isAnythingQueued: true)
            }
        }
        guard let sync = nextResult(until: deadline) else { return .lost(connectionError(sql: nil), isAnythingQueued: true) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        if let refusal { return .refused(refusal.error, index: refusal.index) }
        guard synced else {
            return .refused(PostgresError(code: .unexpectedResponse, message: "the pipeline's sync was answered with something else"),
                            index: statements.count - 1)
        }
        return .answered(rows)
    }

    /// The next result of the pipeline, waiting for it no longer than `deadline` (then the
    /// connection is cut, as ``exchange(sending:blocking:)`` cuts it, and nil is returned).
    private func nextResult(until deadline: ContinuousClock.Instant?) -> OpaquePointer? {
        if let deadline, let limit = configuration.responseTimeout {
            while true {
                let pending = PQflush(handle)
                if pending == 0 { break }
                guard pending > 0, wait(for: Int16(POLLIN | POLLOUT), until: deadline) else { return giveUp(after: limit) }
                guard PQconsumeInput(handle) == 1 else { break }
            }
            while PQisBusy(handle) == 1 {
                guard wait(for: Int16(POLLIN), until: deadline) else { return giveUp(after: limit) }
                guard PQconsumeInput(handle) == 1 else { break }
            }
        }
        return PQgetResult(handle)
    }
}
