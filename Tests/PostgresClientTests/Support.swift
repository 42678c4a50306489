import Foundation
import PostgresClient
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP socket that accepts connections into its backlog but never answers, so that
/// a client connecting to it waits until its own timeout: an unreachable server, without
/// sending anything off this machine.
final class SilentListener {
    let port: Int
    private let descriptor: Int32

    /// - Parameter listening: false to bind the port without listening, so that connections
    ///   to it are refused while no one else can take it.
    init(listening: Bool = true) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 16) == 0)
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ok else {
            close(descriptor)
            throw PostgresError(code: .invalidArgument, message: "cannot open a silent listener")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}


extension SilentListener {
    /// A port that refuses connections.
    static func closed() throws -> SilentListener { try SilentListener(listening: false) }
}

/// Runs blocking work on a thread of its own, so tests do not stall the cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
