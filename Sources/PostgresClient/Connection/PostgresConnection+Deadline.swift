internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// Runs one exchange with the server and returns its last result, as `PQexec` does, but
    /// waits no longer than the configuration's ``PostgresConfiguration/responseTimeout``.
    ///
    /// Without a response timeout `blocking` runs (the plain libpq call). With one, `send`
    /// queues the same command and the answer is read with `poll`; when the server has not
    /// answered by the deadline the socket is shut down, so that libpq sees the connection end,
    /// and nil is returned: the caller reports a lost connection (or an unknown outcome for a
    /// COMMIT), whose message says that the server did not answer in time.
    func exchange(sending send: () -> Int32, blocking: () -> OpaquePointer?) -> OpaquePointer? {
        guard let limit = configuration.responseTimeout else { return blocking() }
        let deadline = ContinuousClock.now + limit
        guard send() == 1 else { return nil }
        while true {
            let pending = PQflush(handle)
            if pending == 0 { break }
            guard pending > 0, wait(for: Int16(POLLIN | POLLOUT), until: deadline) else { return giveUp(after: limit) }
            guard PQconsumeInput(handle) == 1 else { break }
        }
        var last: OpaquePointer?
        while true {
            while PQisBusy(handle) == 1 {
                guard wait(for: Int16(POLLIN), until: deadline) else {
                    if let last { PQclear(last) }
                    return giveUp(after: limit)
                }
                guard PQconsumeInput(handle) == 1 else { break }
            }
            guard let result = PQgetResult(handle) else { break }
            if let last { PQclear(last) }
            last = result
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH
                || PQstatus(handle) == CONNECTION_BAD { break }
        }
        return last
    }

    /// Waits until the socket is ready for `events` or the deadline passes; false on timeout.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        var descriptor = pollfd(fd: PQsocket(handle), events: events, revents: 0)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let milliseconds = Int32(min(Double(Int32.max), (left / .milliseconds(1)).rounded(.up)))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }   // let libpq meet and report the error
        }
    }

    /// Cuts a connection whose server did not answer in time.
    private func giveUp(after limit: Duration) -> OpaquePointer? {
        responseTimedOut = limit
        shutdown(PQsocket(handle), Int32(SHUT_RDWR))
        _ = PQconsumeInput(handle)
        return nil
    }
}
