internal import CLibPQ

/// One statement in a transaction of its own: the statement and a Sync sent together in
/// libpq's pipeline mode, then their answers read back one step at a time.
///
/// The server runs a statement that is not in a transaction block in an implicit transaction,
/// which it commits when it reaches the Sync, after answering the statement and before
/// ReadyForQuery. So the statement's answer alone does not say that anything committed: only
/// the pipeline's sync does. Without BEGIN and COMMIT around it, the server parses, binds and
/// runs one statement rather than three, and the client builds and reads one.
///
/// The same steps serve a thread that waits for each result
/// (``PostgresConnection/pipelinedTransaction(_:)``) and a poller that reads only what has
/// arrived and comes back when the socket is readable (``PostgresPool/pipelinedTransaction(_:)``),
/// so that both classify every outcome the same way:
///
/// - a failure to queue the statement is definite: without a Sync the server commits nothing;
/// - an error the server reported for the statement is thrown as it is;
/// - an error the server reported at the Sync (a deferred constraint, a commit that failed) is
///   thrown as it is: the implicit transaction rolled back;
/// - a connection that broke once the Sync was queued, before the sync came back, is
///   `outcomeUnknown`.
///
/// Not `Sendable`: one thread drives it at a time, as its connection.
final class PipelinedTransaction {
    let connection: PostgresConnection
    private let key: PostgresConnection.StatementKey
    private let binds: [PostgresBind]
    /// The statement's prepared name; nil runs it unprepared.
    private let name: [CChar]?

    /// What is read next.
    private enum Step {
        case statement, sync
    }
    private var step = Step.statement
    private var isReadFailed = false
    /// The current command's result has been read; the NULL that ends it has not.
    private var isEndingCommand = false
    private var rows: PostgresRows?
    /// Output queued but not yet written to the socket (non-blocking sends only).
    private(set) var isFlushing = false
    /// The outcome once known: at the sync when committed, earlier when it failed.
    private(set) var outcome: Result<PostgresRows, PostgresError>?
    /// Whether everything has been read and pipeline mode left, so that the connection is ready
    /// for its next command.
    private(set) var isSettled = false

    init(connection: PostgresConnection, key: PostgresConnection.StatementKey, binds: [PostgresBind],
         name: [CChar]?) {
        self.connection = connection
        self.key = key
        self.binds = binds
        self.name = name
    }

    private var handle: OpaquePointer { connection.handle }

    /// Enters pipeline mode and queues the statement and a sync.
    ///
    /// With `blocking` false, the connection is put in non-blocking mode and output that does
    /// not fit the socket is left queued (``isFlushing``); ``advance(waiting:)`` writes it.
    ///
    /// A failure is also the transaction's ``outcome``, so that nothing waits for answers to
    /// commands that were never sent; ``PostgresConnection/leavePipeline()`` then reads what
    /// was sent.
    ///
    /// - Throws: a definite `connectionLost` if the statement cannot be queued, and
    ///   `outcomeUnknown` if the sync cannot.
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
        let sentStatement = connection.withParameterArrays(binds, { parameters in
            if let name {
                PQsendQueryPrepared(handle, name, parameters.count, parameters.values, parameters.lengths,
                                    parameters.formats, 0)
            } else {
                PQsendQueryParams(handle, key.sql, parameters.count, key.types, parameters.values,
                                  parameters.lengths, parameters.formats, 0)
            }
        }) == 1
        // The server commits only when it reaches the Sync, so a failure this early is definite.
        guard sentStatement else { throw connection.connectionError(sql: key.sql) }
        guard PQpipelineSync(handle) == 1 else {
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
                step = .sync
                continue
            }
            defer { if let result { PQclear(result) } }
            if read(result) { return true }
        }
        return true
    }

    /// Takes one command's result; returns whether that ends the transaction's reading.
    private func read(_ result: OpaquePointer?) -> Bool {
        switch (step, classify(result, keepingRows: step == .statement)) {
        case (.statement, .rows(let statementRows)):
            // Answered, not yet committed: the server commits when it reaches the Sync.
            rows = statementRows
            isEndingCommand = true
            return false
        case (.sync, .synced):
            // Committed: the server answers the Sync only once the transaction is over.
            outcome = rows.map { .success($0) }
                ?? .failure(PostgresError(code: .unexpectedResponse, message: "the statement's answer never came"))
            if PQexitPipelineMode(handle) == 1, PQsetnonblocking(handle, 0) == 0 { isSettled = true }
            return true
        case (.sync, .rows(let unexpected)):
            return finish(.failure(PostgresError(code: .unexpectedResponse,
                                                 message: "the pipeline's sync was answered with \(unexpected.commandTag)")))
        case (.sync, .refused(let error)) where connection.leavesCommitUnknown(error):
            return finish(.failure(connection.outcomeUnknownError(cause: error.message)))
        case (_, .refused(let error)):
            // The statement failed, or the commit at the Sync did (a deferred constraint):
            // either way the implicit transaction rolled back.
            return finish(.failure(error))
        case (_, .lost(let cause)):
            return finish(.failure(connection.outcomeUnknownError(cause: cause)))
        case (.statement, .synced):
            return finish(.failure(PostgresError(code: .unexpectedResponse,
                                                 message: "the pipeline's sync came before the statement's answer")))
        }
    }

    private func finish(_ outcome: Result<PostgresRows, PostgresError>) -> Bool {
        self.outcome = outcome
        return true
    }

    private enum Classified {
        /// The command succeeded.
        case rows(PostgresRows)
        /// The pipeline's sync: the server is done with everything before it.
        case synced
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
        case PGRES_PIPELINE_SYNC:
            return .synced
        case PGRES_PIPELINE_ABORTED:
            return .refused(PostgresError(code: .unexpectedResponse,
                                          message: "the command was skipped because an earlier one in the pipeline failed"))
        default:
            // An error at the sync is the commit's, which the statement asked for.
            let failure = connection.error(from: result, sql: key.sql, binds: binds)
            // libpq's own report of a broken connection carries no SQLSTATE; anything with
            // one was said by the server about this command.
            return failure.sqlState == nil && failure.code != .server ? .lost(failure.message) : .refused(failure)
        }
    }
}
