import PostgresClient

/// Runs blocking work on a thread of its own, so that a test does not stall Swift's
/// cooperative pool while it waits.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await runOnDedicatedThread(named: "cutover-test-blocking", body)
}
