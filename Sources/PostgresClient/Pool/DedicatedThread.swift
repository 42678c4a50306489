import Foundation

/// Runs blocking work (a synchronous connection, a server program) on a new thread of its own
/// and suspends the caller until it finishes, so that Swift's cooperative pool never blocks.
///
/// ```swift
/// let count = try await runOnDedicatedThread {
///     try PostgresConnection(configuration: configuration).query("SELECT 1")[0].decode(Int.self, at: 0)
/// }
/// ```
public func runOnDedicatedThread<T: Sendable>(named name: String = "cutover-blocking",
                                              _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}
