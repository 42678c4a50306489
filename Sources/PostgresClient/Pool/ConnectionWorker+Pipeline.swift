extension ConnectionWorker {
    /// Runs a pipelined transaction (``PostgresConnection/pipelinedTransaction(_:)``), without
    /// a thread waiting for the server where the system has the shared pollers (Linux), and on
    /// the worker's thread elsewhere.
    func runPipelined(_ query: PostgresQuery) async throws -> PostgresRows {
        #if os(Linux)
        if let poller { return try await runPolled(query, on: poller) }
        #endif
        return try await runOnThread(query)
    }

    fileprivate func runOnThread(_ query: PostgresQuery) async throws -> PostgresRows {
        try await run { try $0.pipelinedTransaction(query) }
    }
}

#if os(Linux)
extension ConnectionWorker {
    /// The caller, who holds this worker from the pool, queues the statement and its Sync
    /// itself without blocking and suspends; the poller's thread reads the answers and resumes
    /// it. Only the rare cases go through the worker's thread: a connection to open or heal, a
    /// statement to prepare, and a transaction to roll back after an error.
    private func runPolled(_ query: PostgresQuery, on poller: SocketPoller) async throws -> PostgresRows {
        guard let connection, connection.checkHealth() else { return try await runOnThread(query) }
        let key = try connection.prepareText(of: query)
        // A statement still to prepare is prepared on the worker's thread, which waits for it.
        guard let name = connection.preparedStatementWithoutPreparing(key) else { return try await runOnThread(query) }
        let transaction = PipelinedTransaction(connection: connection, key: key, binds: query.binds, name: name)
        let polled = PolledTransaction(transaction)
        do {
            try transaction.send(blocking: false)
            if transaction.isFlushing { counters.writingAsTheSocketDrains() }
        } catch {
            await settle(polled)
            throw error
        }
        if await polled.wait(on: poller) { counters.polled() }
        if !transaction.isSettled { await settle(polled) }
        switch transaction.outcome {
        case .success(let rows):
            return rows
        case .failure(let error) where connection.isStalePreparedStatement(error) && connection.isConnected:
            // Nothing committed (see ``PostgresConnection/pipelinedTransaction(_:)``); the
            // worker's thread prepares the statement afresh.
            connection.forgetPreparedStatement(key)
            return try await runOnThread(query)
        case .failure(let error):
            throw error
        case nil:
            // `settle` waits for the outcome; a transaction without one is a broken promise.
            throw PostgresError(code: .unexpectedResponse, message: "a pipelined transaction ended without an outcome")
        }
    }

    /// Finishes on the worker's thread what the poller did not: waits for an outcome that is
    /// still unknown, reads to the end of the pipeline, rolls back a transaction an error left
    /// open, and drops a broken connection.
    private func settle(_ polled: PolledTransaction) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            enqueue { [self] in
                let transaction = polled.transaction
                if transaction.outcome == nil {
                    while !transaction.advance(waiting: true) {}
                }
                transaction.connection.leavePipeline()
                if transaction.connection === connection { tidy(transaction.connection) }
                continuation.resume()
            }
        }
    }
}

/// A pipelined transaction handed from its suspended caller to the poller, or to the worker's
/// thread, and back.
final class PolledTransaction: SocketPoller.Work, @unchecked Sendable {
    // Safe to share because one thread at a time touches the transaction and its connection:
    // the caller until it is watched, the poller's thread from then until `finish()` (or the
    // worker's thread during `settle`), and the caller again once resumed. The poller's lock, the
    // worker's queue and the continuations order those hand-overs.
    let transaction: PipelinedTransaction
    let socket: Int32
    /// Unchecked: resumed exactly once, by ``finish()`` or at once when the socket cannot be
    /// watched, and this is the hot path of every save.
    private var continuation: UnsafeContinuation<Bool, Never>?

    init(_ transaction: PipelinedTransaction) {
        self.transaction = transaction
        socket = transaction.connection.socket
    }

    /// Suspends until the poller has read the outcome, or returns false at once if the socket
    /// cannot be watched (``ConnectionWorker/settle(_:)`` then waits on the worker's thread).
    func wait(on poller: SocketPoller) async -> Bool {
        await withUnsafeContinuation { continuation in
            self.continuation = continuation
            if !poller.watch(self, for: transaction.isFlushing ? .write : .read) {
                self.continuation = nil
                continuation.resume(returning: false)
            }
        }
    }

    func advance() -> SocketPoller.Interest {
        if transaction.advance(waiting: false) { return .done }
        return transaction.isFlushing ? .write : .read
    }

    func finish() {
        let continuation = self.continuation
        self.continuation = nil
        continuation?.resume(returning: true)
    }
}
#endif
