import Foundation
import PostgresClient
#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking work on a thread of its own, so tests do not stall the cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
