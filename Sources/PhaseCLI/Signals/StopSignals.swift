import Dispatch
import Foundation
import PostgresClient
import Synchronization

/// Turns SIGINT, SIGTERM and SIGHUP into a request to stop, so that `phase` ends with one line
/// saying where it stopped and how to go on, instead of dying silently.
///
/// ``install()`` runs once at program start. On the first signal it records which one, cancels
/// the statement in flight on every registered connection (so that a long server statement
/// returns at once), runs the registered stop actions (the demo removes its database), and lets
/// the command unwind; the program then prints ``line(for:)`` and exits 128 + the signal. A
/// second signal, or a command that has not unwound within ``grace``, ends the process at once
/// with the same line and code.
///
/// ```swift
/// StopSignals.shared.install()
/// let registration = StopSignals.shared.register(connection.canceller)
/// defer { registration.cancel() }
/// ```
public final class StopSignals: Sendable {
    /// The one instance, for the whole process.
    public static let shared = StopSignals()

    /// How long a command may take to unwind after the first signal before the process ends
    /// anyway: statements are cancelled at once, so only a wait outside the server lasts.
    public static let grace: Duration = .seconds(10)

    /// A signal that stops `phase`.
    public enum Signal: Int32, Sendable, CaseIterable {
        case hangUp = 1
        case interrupt = 2
        case terminate = 15

        /// `SIGHUP`, `SIGINT` or `SIGTERM`.
        public var name: String {
            switch self {
            case .hangUp: "SIGHUP"
            case .interrupt: "SIGINT"
            case .terminate: "SIGTERM"
            }
        }

        /// 128 + the signal's number, as a shell reports a process it ended.
        public var exitCode: ExitCode {
            switch self {
            case .hangUp: .stoppedByHangUp
            case .interrupt: .stoppedByInterrupt
            case .terminate: .stoppedByTermination
            }
        }
    }

    /// Something to undo with ``Registration/cancel()`` when it is no longer needed.
    public struct Registration: Sendable {
        fileprivate let id: Int
        fileprivate let owner: StopSignals

        /// Forgets the canceller or action registered.
        public func cancel() {
            owner.state.withLock {
                $0.cancellers[id] = nil
                $0.actions[id] = nil
            }
        }
    }

    fileprivate struct State: @unchecked Sendable {
        // Safe because it is only touched with the mutex held; the signal sources are never
        // used after installation except to keep them alive.
        var received: Signal?
        /// The stop actions are running (the demo's removes its cluster, and what it stops
        /// may still print).
        var isActing = false
        var nextID = 0
        var cancellers: [Int: PostgresCanceller] = [:]
        var actions: [Int: @Sendable (Signal) -> Void] = [:]
        var describe: @Sendable (Signal) -> String = { "stopped by \($0.name)" }
        var sources: [any DispatchSourceSignal] = []
    }

    fileprivate let state = Mutex(State())

    /// Whether the stop line is written. A mutex of its own, held while the line is written,
    /// so that the process never ends between one thread taking the line and writing it.
    private let lineWritten = Mutex(false)

    private init() {}

    /// Starts turning the three signals into stop requests; later calls do nothing.
    public func install() {
        state.withLock { state in
            guard state.sources.isEmpty else { return }
            state.sources = Signal.allCases.map { signal in
                // Ignored first, so that the default action (ending the process) never runs;
                // the dispatch source still sees the signal.
                Glibc.signal(signal.rawValue, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: .global())
                source.setEventHandler { [self] in receive(signal) }
                source.resume()
                return source
            }
        }
    }

    /// The signal that asked to stop, if one did.
    public var received: Signal? { state.withLock { $0.received } }

    /// Whether a signal asked to stop.
    public var isStopRequested: Bool { received != nil }

    /// Throws ``StopRequested`` when a signal asked to stop: called before work that would
    /// start after the signal (a new connection), so that the command unwinds instead.
    public func checkpoint() throws {
        if let received { throw StopRequested(signal: received) }
    }

    /// Sets the line printed when the command stops: where it stopped and how to go on.
    public func describeStop(_ describe: @escaping @Sendable (Signal) -> String) {
        state.withLock { $0.describe = describe }
    }

    /// The line for `signal`.
    public func line(for signal: Signal) -> String { state.withLock { $0.describe }(signal) }

    /// Cancels `canceller`'s connection's statement when a stop is requested (at once, if one
    /// was already).
    @discardableResult
    public func register(_ canceller: PostgresCanceller) -> Registration {
        let (registration, stopped) = state.withLock { state in
            state.nextID += 1
            state.cancellers[state.nextID] = canceller
            return (Registration(id: state.nextID, owner: self), state.received != nil)
        }
        if stopped { canceller.cancel() }
        return registration
    }

    /// Runs `action` on the first signal, after the statements are cancelled.
    public func onStop(_ action: @escaping @Sendable (Signal) -> Void) -> Registration {
        state.withLock { state in
            state.nextID += 1
            state.actions[state.nextID] = action
            return Registration(id: state.nextID, owner: self)
        }
    }

    /// Writes the stop line with `write`, once: the signal, or nil when no stop was requested
    /// or the line is written already. A thread ending the process meanwhile waits for the
    /// write to finish.
    ///
    /// - Parameter afterStopActions: wait (a minute at most) until the stop actions have run,
    ///   so that the line is the last one: what an action stops may print as it goes. An
    ///   action that ends the process writes the line itself.
    @discardableResult
    public func writeLineOnce(afterStopActions: Bool = true, _ write: (String) -> Void) -> Signal? {
        guard let received else { return nil }
        if afterStopActions {
            let deadline = ContinuousClock.now + .seconds(60)
            while state.withLock({ $0.isActing }), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        }
        return lineWritten.withLock { isWritten in
            guard !isWritten else { return nil }
            write(line(for: received))
            isWritten = true
            return received
        }
    }

    /// Prints the stop line (unless printed already) and ends the process at once with the
    /// signal's exit code. Exit handlers are skipped: other threads may still be running, and
    /// libcrypto's handlers would free state they hold.
    public func leave(_ signal: Signal) -> Never {
        writeLineOnce(afterStopActions: false) { line in
            // A plain write(2): no lock that a thread stopped mid-write could hold.
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
        _exit(signal.exitCode.rawValue)
    }

    private func receive(_ signal: Signal) {
        let first = state.withLock { state -> (cancellers: [PostgresCanceller], actions: [@Sendable (Signal) -> Void])? in
            guard state.received == nil else { return nil }
            state.received = signal
            state.isActing = !state.actions.isEmpty
            return (Array(state.cancellers.values), state.actions.keys.sorted().map { state.actions[$0]! })
        }
        guard let first else { leave(received ?? signal) }
        // Each cancel on a thread of its own: a request to a server that does not answer may
        // block, and dispatch's few worker threads may all be busy.
        for canceller in first.cancellers { Thread.detachNewThread { canceller.cancel() } }
        // Actions run to their end (the demo's removes a cluster) before the grace starts.
        for action in first.actions { action(signal) }
        state.withLock { $0.isActing = false }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.grace / .milliseconds(1)))) { [self] in
            leave(signal)
        }
    }
}

/// The error a command unwinds with when a signal asked it to stop before it began more work.
public struct StopRequested: Error, Sendable, CustomStringConvertible {
    /// The signal that asked.
    public let signal: StopSignals.Signal
    public var description: String { "stopped by \(signal.name)" }
}
