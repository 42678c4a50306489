internal import CLibPQ
import Synchronization

/// Asks the server to cancel the statement a connection is running, from any thread.
///
/// Made once per connection (``PostgresConnection/canceller``) while the connection is
/// usable, and kept by whoever may need to stop it: a signal handler, a watchdog. ``cancel()``
/// opens a short separate connection to the server, as libpq's `PQcancel` does; the statement
/// in flight then fails with SQLSTATE 57014 (`query_canceled`) on its own thread. Cancelling
/// when nothing runs does nothing.
///
/// ```swift
/// let canceller = connection.canceller
/// Thread.detachNewThread { canceller.cancel() }
/// ```
public final class PostgresCanceller: Sendable {
    /// libpq's PGcancel, freed in `deinit`; nil when the connection was already broken. Every
    /// use holds the mutex, so calls from several threads do not overlap.
    private let handle: Mutex<Handle>

    private struct Handle: @unchecked Sendable {
        // Safe because it is only touched with the mutex held, and libpq's PGcancel does not
        // refer to the connection it was made from.
        let pointer: OpaquePointer?
    }

    init(connection: OpaquePointer) {
        handle = Mutex(Handle(pointer: PQgetCancel(connection)))
    }

    deinit {
        handle.withLock { if let pointer = $0.pointer { PQfreeCancel(pointer) } }
    }

    /// Sends the cancel request; true when the server took it (which does not mean a
    /// statement was running).
    @discardableResult
    public func cancel() -> Bool {
        handle.withLock { handle in
            guard let pointer = handle.pointer else { return false }
            var reason = [CChar](repeating: 0, count: 256)
            return PQcancel(pointer, &reason, Int32(reason.count)) == 1
        }
    }
}
