import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``PostgresListener`` reports.
public enum PostgresListenerEvent: Sendable, Equatable {
    /// LISTEN is in place on every channel. After a reconnect (`isReconnect` true) any
    /// notification sent while the connection was down was missed: re-read the state it
    /// would have announced.
    case listening(isReconnect: Bool)
    /// A notification arrived.
    case notification(PostgresNotification)
    /// The connection was lost or could not be made; the listener keeps retrying.
    case connectionLost(reason: String)
}

/// Listens on PostgreSQL notification channels and delivers what arrives as an `AsyncSequence`
/// that survives reconnects.
///
/// The listener runs on a thread of its own with a dedicated connection. When the connection
/// breaks it reconnects with backoff, issues LISTEN again and says so with
/// ``PostgresListenerEvent/listening(isReconnect:)``. Iteration ends when the consuming task is
/// cancelled or stops iterating, or after ``stop()``.
///
/// ```swift
/// let listener = PostgresListener(configuration: configuration, channels: ["cutover_writer"])
/// for await event in listener.events {
///     if case .notification(let note) = event { print(note.payload) }
/// }
/// ```
public final class PostgresListener: Sendable {
    /// The events, in order. Iterate it from one task only.
    public let events: AsyncStream<PostgresListenerEvent>
    private let isStopped = StopFlag()
    private let thread = JoinedThread(named: "cutover-listener")

    /// Starts listening on `channels`.
    ///
    /// - Parameters:
    ///   - retryDelay: the first wait before reconnecting; it doubles up to `maximumRetryDelay`.
    ///   - pollInterval: how often the thread looks up from its socket to see whether it was
    ///     stopped; notifications themselves are delivered as soon as they arrive.
    public init(configuration: PostgresConfiguration, channels: [String],
                retryDelay: Duration = .milliseconds(50), maximumRetryDelay: Duration = .seconds(2),
                pollInterval: Duration = .milliseconds(100)) {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresListenerEvent.self,
                                                              bufferingPolicy: .unbounded)
        self.events = stream
        let stopped = isStopped
        let loop = ListenLoop(configuration: configuration, channels: channels, continuation: continuation,
                              isStopped: stopped, retryDelay: retryDelay, maximumRetryDelay: maximumRetryDelay,
                              pollMilliseconds: Int32(pollInterval.components.seconds * 1000
                                  + pollInterval.components.attoseconds / 1_000_000_000_000_000))
        continuation.onTermination = { _ in stopped.set() }
        thread.start { loop.run() }
    }

    deinit { stop() }

    /// Stops listening: the thread closes its connection and the event sequence ends soon after.
    public func stop() {
        isStopped.set()
    }

    /// Stops listening and waits until the listener's thread has closed its connection and ended.
    public func stopAndWait() async {
        isStopped.set()
        await thread.ended.wait()
    }
}

/// The listener's thread: connect, LISTEN, wait on the socket, deliver, reconnect.
private struct ListenLoop: @unchecked Sendable {
    // Safe to send because it is handed to exactly one thread and used only there; its
    // shared parts (`continuation`, `isStopped`) are themselves Sendable.
    let configuration: PostgresConfiguration
    let channels: [String]
    let continuation: AsyncStream<PostgresListenerEvent>.Continuation
    let isStopped: StopFlag
    let retryDelay: Duration
    let maximumRetryDelay: Duration
    let pollMilliseconds: Int32

    var stopped: Bool { isStopped.isSet }

    func run() {
        var hasListened = false
        var delay = retryDelay
        var reportedFailure = false
        while !stopped {
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(configuration: configuration)
                for channel in channels {
                    try connection.execute(unsafeSQL: "LISTEN " + connection.quoteIdentifier(channel))
                }
            } catch {
                if !reportedFailure {
                    continuation.yield(.connectionLost(reason: "\(error)"))
                    reportedFailure = true
                }
                sleep(delay)
                delay = min(delay * 2, maximumRetryDelay)
                continue
            }
            continuation.yield(.listening(isReconnect: hasListened))
            hasListened = true
            reportedFailure = false
            delay = retryDelay
            if let reason = deliver(from: connection) {
                continuation.yield(.connectionLost(reason: reason))
                reportedFailure = true
            }
        }
        continuation.finish()
    }

    /// Delivers notifications until stopped (nil) or the connection breaks (the reason).
    private func deliver(from connection: PostgresConnection) -> String? {
        var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
        while !stopped {
            descriptor.revents = 0
            let ready = poll(&descriptor, 1, pollMilliseconds)
            if ready < 0 && errno != EINTR { return "poll failed: errno \(errno)" }
            guard ready > 0 else { continue }
            let healthy = connection.consumeInput()
            for notification in connection.takeNotifications() {
                continuation.yield(.notification(notification))
            }
            if !healthy { return connection.lastErrorMessage() }
        }
        return nil
    }

    /// Sleeps in short slices so that a stop is noticed promptly.
    private func sleep(_ duration: Duration) {
        let deadline = ContinuousClock.now + duration
        while !stopped && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: min(0.02, max(0, (deadline - ContinuousClock.now) / .seconds(1))))
        }
    }
}

/// A flag raised once, read from any thread.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    /// Raises the flag.
    func set() { raised.store(true, ordering: .releasing) }
    /// Whether the flag was raised.
    var isSet: Bool { raised.load(ordering: .acquiring) }
}
