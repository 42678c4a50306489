import Synchronization

/// Runs blocking work (a synchronous connection, a server program) on a new thread of its own
/// and suspends the caller until it finishes, so that Swift's cooperative pool never blocks.
///
/// The caller resumes only once the thread has ended (see ``JoinedThread``), so a program may
/// exit as soon as this returns.
///
/// ```swift
/// let count = try await runOnDedicatedThread {
///     try PostgresConnection(configuration: configuration).query("SELECT 1")[0].decode(Int.self, at: 0)
/// }
/// ```
public func runOnDedicatedThread<T: Sendable>(named name: String = "cutover-blocking",
                                              _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let outcome = ThreadOutcome<T>()
    let thread = JoinedThread(named: name)
    thread.start { outcome.result.withLock { $0 = Result { try body() } } }
    await thread.ended.wait()
    return try outcome.result.withLock { $0! }.get()
}

/// What the body returned or threw, handed from its thread to the waiting task.
private final class ThreadOutcome<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
}
