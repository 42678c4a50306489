internal import CLibPQ

/// One statement in a transaction of its own: BEGIN, the statement and COMMIT sent together in
/// libpq's pipeline mode, then their results read back one step at a time.
///
/// The same steps serve a thread that waits for each result
/// (``PostgresConnection/pipelinedTransaction(_:)``) and a poller that reads only what has
/// arrived and comes back when the socket is readable (``PostgresPool/pipelinedTransaction(_:)``),
/// so that both classify every outcome the same way:
///
/// - a failure to queue BEGIN or the statement is definite: without a COMMIT nothing commits;
/// - an error the server reported for BEGIN or the statement is thrown as it is;
/// - a COMMIT answered with ROLLBACK is `commitRolledBack`;
/// - a connection that broke once COMMIT was queued, before its answer, is `outcomeUnknown`.
///
/// Not `Sendable`: one thread drives it at a time, as its connection.
final class PipelinedTransaction {
    let connection: PostgresConnection
    private let key: PostgresConnection.StatementKey
    private let binds: [PostgresBind]
    private let names: StatementNames

    /// The prepared names of BEGIN, the statement and COMMIT; nil runs one unprepared.
    struct StatementNames {
        var begin: [CChar]?
        var statement: [CChar]?
        var commit: [CChar]?
    }

    /// What is read next.
    private enum Step {
        case begin, statement, commit, sync

        var next: Step {
            switch self {
            case .begin: .statement
            case .statement: .commit
            case .commit, .sync: .sync
            }
        }
    }
    private var step = Step.begin
    private var isReadFailed = false
    /// The current command's result has been read; the NULL that ends it has not.
    private var isEndingCommand = false
    private var rows: PostgresRows?
    /// Output queued but not yet written to the socket (non-blocking sends only).
    private(set) var isFlushing = false
    /// The outcome once known; a committed transaction may still have its sync to read.
    private(set) var outcome: Result<PostgresRows, PostgresError>?
    /// Whether everything has been read and pipeline mode left, so that the connection is ready
    /// for its next command.
    private(set) var isSettled = false

    init(connection: PostgresConnection, key: PostgresConnection.StatementKey, binds: [PostgresBind],
         names: StatementNames) {
        self.connection = connection
        self.key = key
        self.binds = binds
        self.names = names
    }

    private var handle: OpaquePointer { connection.handle }

    /// Enters pipeline mode and queues the three commands and a sync.
    ///
    /// With `blocking` false, the connection is put in non-blocking mode and output that does
    /// not fit the socket is left queued (``isFlushing``); ``advance(waiting:)`` writes it.
    ///
    /// A failure is also the transaction's ``outcome``, so that nothing waits for answers to
    /// commands that were never sent; ``PostgresConnection/leavePipeline()`` then reads what
    /// was sent and rolls it back.
    ///
    /// - Throws: a definite `connectionLost` if BEGIN or the statement cannot be queued, and
    ///   `outcomeUnknown` if COMMIT or the sync cannot.
    func send(blocking: Bool) throws {
        do {
            try queue(blocking: blocking)
        } catch {
            outcome = .failure(error)
            throw error
        }
    }

    private func queue(blocking: Bool) throws(PostgresError) {
        guard PQsetnonblocking(handle, blocking ? 0 : 1) == 0 else { throw connection.connectionError(sql: key.sql) }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(code: .unexpectedResponse,
                                message: "cannot enter pipeline mode: " + connection.lastErrorMessage())
        }
        let sentStatement = sendWithoutParameters("BEGIN", prepared: names.begin)
            && connection.withParameterArrays(binds, { parameters in
                if let name = names.statement {
                    PQsendQueryPrepared(handle, name, parameters.count, parameters.values, parameters.lengths,
                                        parameters.formats, 0)
                } else {
                    PQsendQueryParams(handle, key.sql, parameters.count, key.types, parameters.values,
                                      parameters.lengths, parameters.formats, 0)
                }
            }) == 1
        // Without a COMMIT the server cannot commit, so a failure this early is definite.
        guard sentStatement else {
            let error = connection.connectionError(sql: key.sql)
            // BEGIN may be queued: a sync after it lets the pipeline be read to its end (the
            // server answers nothing before a sync) and the transaction it opens rolled back.
            _ = PQpipelineSync(handle)
            throw error
        }
        guard sendWithoutParameters("COMMIT", prepared: names.commit), PQpipelineSync(handle) == 1 else {
            throw connection.outcomeUnknownError(cause: connection.lastErrorMessage())
        }
        if !blocking {
            switch PQflush(handle) {
            case 0: isFlushing = false
            case 1: isFlushing = true
            default: throw connection.outcomeUnknownError(cause: connection.lastErrorMessage())
            }
        }
    }

    /// Reads results until the outcome is known and the pipeline is finished.
    ///
    /// With `waiting`, each read blocks until the server answers, and the call returns only
    /// when done. Without it, it writes what is still queued, takes what the socket holds, and
    /// returns false as soon as libpq would have to wait; call it again when the socket is
    /// ready (for writing while ``isFlushing``, for reading otherwise).
    ///
    /// - Returns: whether it is done (the outcome is then set).
    func advance(waiting: Bool) -> Bool {
        if !waiting {
            if isFlushing {
                switch PQflush(handle) {
                case 0: isFlushing = false
                case 1: return false
                default: return finish(.failure(connection.outcomeUnknownError(cause: connection.lastErrorMessage())))
                }
            }
            // A failed read marks the connection broken (libpq then no longer reports itself busy);
            // what was read before the break is still parsed below, and then the break itself.
            isReadFailed = PQconsumeInput(handle) == 0
        }
        while !isSettled {
            if !waiting && PQisBusy(handle) == 1 {
                guard isReadFailed else { return false }
                return read(nil)
            }
            let result = PQgetResult(handle)
            if isEndingCommand {
                if let result {
                    PQclear(result)
                    // A broken connection may never deliver the NULL; the next step finds out.
                    if PQstatus(handle) == CONNECTION_OK { continue }
                }
                isEndingCommand = false
                step = step.next
                continue
            }
            defer { if let result { PQclear(result) } }
            if read(result) { return true }
        }
        return true
    }

    /// Takes one command's result; returns whether that ends the transaction's reading.
    private func read(_ result: OpaquePointer?) -> Bool {
        if step == .sync {
            // COMMIT succeeded: the outcome is known whatever happens to the rest.
            if let result, PQresultStatus(result) == PGRES_PIPELINE_SYNC,
               PQexitPipelineMode(handle) == 1, PQsetnonblocking(handle, 0) == 0 {
                isSettled = true
            }
            return true
        }
        switch (step, classify(result, keepingRows: step == .statement)) {
        case (.commit, .rows(let commit)):
            if commit.commandTag == "COMMIT", let rows {
                // Committed. Its NULL and then the sync follow; reading them returns the
                // connection to normal mode, but the outcome no longer depends on them.
                outcome = .success(rows)
                isEndingCommand = true
                return false
            }
            if commit.commandTag == "ROLLBACK" { return finish(.failure(connection.commitRolledBackError())) }
            return finish(.failure(PostgresError(code: .unexpectedResponse,
                                                 message: "COMMIT was answered with \(commit.commandTag)")))
        case (_, .rows(let commandRows)):
            // BEGIN or the statement: only the statement's rows are kept.
            if step == .statement { rows = commandRows }
            isEndingCommand = true
            return false
        case (.commit, .refused(let error)) where connection.leavesCommitUnknown(error):
            return finish(.failure(connection.outcomeUnknownError(cause: error.message)))
        case (_, .refused(let error)):
            return finish(.failure(error))
        case (_, .lost(let cause)):
            return finish(.failure(connection.outcomeUnknownError(cause: cause)))
        }
    }

    private func finish(_ outcome: Result<PostgresRows, PostgresError>) -> Bool {
        self.outcome = outcome
        return true
    }

    /// Queues a statement without parameters: its prepared name when it has one.
    private func sendWithoutParameters(_ sql: String, prepared name: [CChar]?) -> Bool {
        if let name { return PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 0) == 1 }
        return PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1
    }

    private enum Classified {
        /// The command succeeded.
        case rows(PostgresRows)
        /// The server reported an error for this command: it did not take effect.
        case refused(PostgresError)
        /// No answer from the server: the connection broke.
        case lost(String)
    }

    /// Classifies one command's result; without `keepingRows`, only its command tag is copied.
    private func classify(_ result: OpaquePointer?, keepingRows: Bool) -> Classified {
        guard let result else { return .lost(connection.lastErrorMessage()) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return .rows(keepingRows ? PostgresConnection.copyRows(result)
                                     : PostgresRows(columns: [], cells: [], commandTag: String(cString: PQcmdStatus(result)),
                                                    affectedRows: nil))
        case PGRES_PIPELINE_ABORTED:
            return .refused(PostgresError(code: .unexpectedResponse,
                                          message: "the command was skipped because an earlier one in the pipeline failed"))
        default:
            let failure = step == .statement ? connection.error(from: result, sql: key.sql, binds: binds)
                                             : connection.error(from: result, sql: step == .begin ? "BEGIN" : "COMMIT")
            // libpq's own report of a broken connection carries no SQLSTATE; anything with
            // one was said by the server about this command.
            return failure.sqlState == nil && failure.code != .server ? .lost(failure.message) : .refused(failure)
        }
    }
}
