import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a free loopback port: the port a server started here will take, a
/// proxy's listener, or (in `PostgresFaults`) a peer that refuses or never answers.
package final class LoopbackSocket: Sendable {
    /// The socket's file descriptor; closed when the value goes away.
    package let descriptor: Int32
    /// The port it is bound to.
    package let port: Int

    /// Binds a new socket to a free port on 127.0.0.1.
    ///
    /// - Parameter backlog: listen with this backlog; nil leaves the socket bound but not
    ///   listening, so connections to the port are refused while nobody else can take it.
    package init(backlog: Int32?) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = descriptor >= 0 && withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && (backlog.map { listen(descriptor, $0) == 0 } ?? true)
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ok else {
            if descriptor >= 0 { close(descriptor) }
            throw LoopbackSocketError(message: "cannot bind a loopback socket: errno \(errno)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// A loopback socket could not be made.
package struct LoopbackSocketError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    package var message: String
    package var description: String { message }
}
