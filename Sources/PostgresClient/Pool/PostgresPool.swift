import Synchronization

/// A bounded pool of connections for async Swift code.
///
/// Each connection lives on a thread of its own, so the blocking libpq calls never occupy
/// Swift's cooperative thread pool; callers suspend until their work has run. A one-statement
/// transaction (``pipelinedTransaction(_:)``) does not even need that thread: it is sent from
/// the caller's task and its answer read by a poller thread shared with other connections. A
/// connection that the server closed (a terminated backend, a restart) is noticed before it is
/// handed out and replaced. The pool never holds more than ``maximumConnections`` connections.
///
/// ```swift
/// let pool = PostgresPool(configuration: configuration, maximumConnections: 8)
/// let count = try await pool.withConnection { connection in
///     try connection.query("SELECT count(*) AS n FROM drafts")[0].decode(Int.self, "n")
/// }
/// await pool.shutdown()
/// ```
public final class PostgresPool: Sendable {
    /// Where the connections go.
    public let configuration: PostgresConfiguration
    /// The most connections open at once.
    public let maximumConnections: Int
    /// How long a caller waits for a free connection before `poolTimeout`.
    public let acquireTimeout: Duration

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<ConnectionWorker, any Error>
        var timeout: Task<Void, Never>?
    }

    private struct State {
        var idle: [ConnectionWorker] = []
        var workerCount = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var isClosed = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let counters = PoolCounters()

    /// Makes a pool; connections are opened when first needed.
    public init(configuration: PostgresConfiguration, maximumConnections: Int = 8,
                acquireTimeout: Duration = .seconds(10)) {
        precondition(maximumConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.maximumConnections = maximumConnections
        self.acquireTimeout = acquireTimeout
    }

    deinit {
        state.withLock { state in
            for worker in state.idle { worker.stopSoon() }
        }
    }

    /// Runs `body` with a connection of the pool, on that connection's own thread.
    ///
    /// - Throws: `poolTimeout` when no connection came free in time, `poolClosed` after
    ///   ``shutdown()``, a connection error, or whatever `body` throws.
    @discardableResult
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let worker = try await acquire()
        defer { release(worker) }
        return try await worker.run(body)
    }

    /// Runs one statement in a transaction of its own, in one round trip, on a connection of
    /// the pool; see ``PostgresConnection/pipelinedTransaction(_:)`` for how each outcome is
    /// reported.
    ///
    /// While the server works, no thread waits for it: the statements are queued from the
    /// caller's task without blocking, and poller threads shared by every pool (one per core)
    /// read the answers as they arrive (on Linux; elsewhere the connection's own thread waits).
    ///
    /// ```swift
    /// let rows = try await pool.pipelinedTransaction("SELECT * FROM cutover.save_draft(\(scope), …)")
    /// ```
    public func pipelinedTransaction(_ query: PostgresQuery) async throws -> PostgresRows {
        let worker = try await acquire()
        defer { release(worker) }
        return try await worker.runPipelined(query)
    }

    /// The threads that read every pool's pipelined answers (one per core, at most four), as a
    /// task executor; nil where there are none (outside Linux).
    ///
    /// A task that does little but save through pools can prefer it: between its awaits it then
    /// runs on the thread that read its last answer, and goes on at once, where otherwise a
    /// cooperative thread has to be woken to pick it up (about 0.1 ms per transaction on a busy
    /// two-core machine). The price: while such a task runs, no answer of the connections that
    /// thread watches is read, so it must never block (no blocking libpq call, no `sleep`, no
    /// long computation); `await`ing anything, a pool's other calls included, is fine.
    ///
    /// ```swift
    /// let worker = Task(executorPreference: PostgresPool.taskExecutor) {
    ///     for request in requests { _ = try await router.save(request) }
    /// }
    /// ```
    public static var taskExecutor: (any TaskExecutor)? {
        #if os(Linux)
        PollerGroup.shared
        #else
        nil
        #endif
    }

    /// Pipelined transactions whose answers a poller read, no thread waiting (for tests).
    var polledTransactions: Int { counters.polledTransactions }

    /// Pipelined transactions whose request did not fit the socket at once, so that the rest
    /// was written as the socket drained (for tests).
    var transactionsWrittenAsTheSocketDrained: Int { counters.writtenAsTheSocketDrained }

    /// Callers waiting for a connection to come free (for tests).
    var waitingCallers: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` in a transaction on a connection of the pool; see
    /// ``PostgresConnection/withTransaction(isolation:_:)``.
    @discardableResult
    public func withTransaction<T: Sendable>(isolation: PostgresConnection.IsolationLevel = .readCommitted,
                                             _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withConnection { connection in
            try connection.withTransaction(isolation: isolation, body)
        }
    }

    /// Connection counts: open now, the most open at once, and opened in all (reconnects
    /// included).
    public var statistics: (open: Int, peak: Int, opened: Int) { counters.snapshot }

    /// Refuses new work, fails waiting callers with `poolClosed`, lets running work finish,
    /// and closes every connection before returning.
    ///
    /// It returns only once every connection's thread has ended, so the process may exit right
    /// after it. Call it before exiting: a program that exits while a thread that used libpq is
    /// still ending can crash in libcrypto's exit handler.
    public func shutdown() async {
        let (idle, waiters): ([ConnectionWorker], [Waiter]) = state.withLock { state in
            state.isClosed = true
            let idle = state.idle
            let waiters = state.waiters
            state.idle = []
            state.waiters = []
            state.workerCount -= idle.count
            return (idle, waiters)
        }
        for waiter in waiters {
            waiter.timeout?.cancel()
            waiter.continuation.resume(throwing: Self.closedError)
        }
        for worker in idle { await worker.stop() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.workerCount == 0 { return true }
                state.shutdownWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: Acquire and release

    private static var closedError: PostgresError {
        PostgresError(code: .poolClosed, message: "the connection pool is shut down")
    }

    private enum Grant {
        case worker(ConnectionWorker)
        case failure(PostgresError)
        case waiting(UInt64)
    }

    private func acquire() async throws -> ConnectionWorker {
        // A free connection is handed over without suspending: a continuation resumed at once
        // still sends the task back through the executor's queue, and often wakes a thread.
        let quick: Grant = state.withLock { state in
            if state.isClosed {
                return .failure(Self.closedError)
            }
            if let worker = state.idle.popLast() { return .worker(worker) }
            state.nextID += 1
            return .waiting(state.nextID)
        }
        let id: UInt64
        switch quick {
        case .worker(let worker): return worker
        case .failure(let error): throw error
        case .waiting(let next): id = next
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let grant: Grant = state.withLock { state in
                    if state.isClosed {
                        return .failure(Self.closedError)
                    }
                    if let worker = state.idle.popLast() { return .worker(worker) }
                    if state.workerCount < maximumConnections {
                        state.workerCount += 1
                        return .worker(ConnectionWorker(name: "cutover-postgres-\(id)", configuration: configuration,
                                                        counters: counters))
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .waiting(id)
                }
                switch grant {
                case .worker(let worker): continuation.resume(returning: worker)
                case .failure(let error): continuation.resume(throwing: error)
                case .waiting(let id):
                    let timeout = acquireTimeout
                    let task = Task { [weak self] in
                        try? await Task.sleep(for: timeout)
                        guard !Task.isCancelled else { return }
                        self?.abandon(id, because: PostgresError(
                            code: .poolTimeout,
                            message: "no connection came free within \(timeout) (pool of \(self?.maximumConnections ?? 0))"))
                    }
                    state.withLock { state in
                        if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                            state.waiters[index].timeout = task
                        } else {
                            task.cancel()
                        }
                    }
                    if Task.isCancelled { abandon(id, because: CancellationError()) }
                }
            }
        } onCancel: {
            abandon(id, because: CancellationError())
        }
    }

    /// Removes a waiter that timed out or was cancelled, if it is still waiting.
    private func abandon(_ id: UInt64, because error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        guard let waiter else { return }
        waiter.timeout?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    private func release(_ worker: ConnectionWorker) {
        enum Next {
            case handOver(Waiter)
            case stop([CheckedContinuation<Void, Never>])
            case keep
        }
        let next: Next = state.withLock { state in
            if !state.waiters.isEmpty { return .handOver(state.waiters.removeFirst()) }
            if state.isClosed {
                state.workerCount -= 1
                if state.workerCount == 0 {
                    let waiters = state.shutdownWaiters
                    state.shutdownWaiters = []
                    return .stop(waiters)
                }
                return .stop([])
            }
            state.idle.append(worker)
            return .keep
        }
        switch next {
        case .handOver(let waiter):
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: worker)
        case .stop(let shutdownWaiters):
            Task {
                await worker.stop()
                for waiter in shutdownWaiters { waiter.resume() }
            }
        case .keep:
            break
        }
    }
}
