import Foundation

/// Runs blocking work (a synchronous connection, a server program) on a thread of its own, so
/// that a test does not stall Swift's cooperative pool while it waits.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
