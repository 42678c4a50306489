import Foundation

/// A thread of its own that owns at most one connection and runs jobs on it, one at a time.
///
/// libpq calls block; running them here keeps them off Swift's cooperative thread pool, which
/// has only as many threads as cores. Async callers suspend on a continuation until their job
/// has run. The worker heals itself: before each job it checks, without a round trip, that the
/// server has not closed the connection, and reconnects if it has.
final class ConnectionWorker: @unchecked Sendable {
    // Safe to share because `jobs` and `isStopping` are only touched while `condition` is
    // locked, and `connection` is touched by one thread at a time: the worker's own thread
    // inside jobs, or the pool's caller that holds the worker (``runPipelined(_:)``), which
    // touches it only while no job of its runs and hands it to the poller's thread and back
    // through a lock and a continuation.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var isStopping = false
    private(set) var connection: PostgresConnection?

    let configuration: PostgresConfiguration
    let counters: PoolCounters
    private let thread: JoinedThread
    #if os(Linux)
    /// The poller that reads this worker's pipelined answers.
    let poller = PollerGroup.shared?.pollerForConnection()
    #endif

    init(name: String, configuration: PostgresConfiguration, counters: PoolCounters) {
        self.configuration = configuration
        self.counters = counters
        thread = JoinedThread(named: name)
        thread.start { [self] in runLoop() }
    }

    /// Runs `body` with a live connection on the worker's thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue { [self] in
                let result = Result { () throws -> T in
                    let connection = try liveConnection()
                    defer { tidy(connection) }
                    return try body(connection)
                }
                // Resumed only once the connection is tidy: the caller may hand it to someone
                // who drives it directly (``runPipelined(_:)``).
                continuation.resume(with: result)
            }
        }
    }

    /// Closes the connection and ends the thread once queued jobs have run; resumes the
    /// caller when the thread has ended.
    func stop() async {
        stopSoon()
        await thread.ended.wait()
    }

    /// Ends the thread without waiting (used when the pool is released without a shutdown).
    func stopSoon() {
        enqueue { [self] in
            dropConnection()
            condition.lock()
            isStopping = true
            condition.unlock()
        }
    }

    func enqueue(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.unlock()
        // Signalled after unlocking: a thread woken while the lock is still held wakes only to
        // block on the lock, and has to be woken a second time when it is released.
        condition.signal()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !isStopping { condition.wait() }
            if jobs.isEmpty && isStopping {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    // MARK: On the worker's thread only

    private func liveConnection() throws -> PostgresConnection {
        if let connection, connection.checkHealth() { return connection }
        dropConnection()
        let fresh = try PostgresConnection(configuration: configuration)
        counters.opened()
        connection = fresh
        return fresh
    }

    /// After a job: a connection left inside a transaction is rolled back; a broken one is
    /// dropped, so the next job reconnects.
    func tidy(_ connection: PostgresConnection) {
        switch connection.transactionState {
        case .idle:
            return
        case .inTransaction, .failedTransaction:
            if (try? connection.execute(unsafeSQL: "ROLLBACK")) != nil, connection.transactionState == .idle { return }
            dropConnection()
        case .busy, .unknown:
            dropConnection()
        }
    }

    private func dropConnection() {
        guard connection != nil else { return }
        connection = nil
        counters.closed()
    }
}
