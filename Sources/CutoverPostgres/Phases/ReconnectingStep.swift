import Cutover
import Synchronization

/// Runs a step again on a new session when its session is lost, until it finishes or a time
/// budget is spent: what carries a step through a failover.
///
/// Each attempt opens its own sessions (with a multi-host URL and
/// `target_session_attrs=read-write`, libpq finds the new primary), takes the plan's lease,
/// reads the state and runs the step. That is safe because steps are compare-and-set
/// transitions: a switch whose change already committed reports itself done, a backfill goes
/// on from its stored cursor, and the attempt the lost session left running is marked
/// interrupted when the next one takes over. Only a ``ConnectionLoss`` is retried, and only
/// after the first attempt has connected: a server that cannot be reached at all is reported
/// at once. Each retry is announced through `log` in one line.
///
/// ```swift
/// let step = ReconnectingStep(command: "backfill", budget: .seconds(60), log: { print($0) })
/// let report = try await step.run { try await runOnce(step) }   // runOnce calls step.connected(backendPID:)
/// ```
public final class ReconnectingStep: Sendable {
    /// The command's name, for the log lines.
    public let command: String
    /// The longest time spent reconnecting, from the first loss; zero never retries.
    public let budget: Duration
    private let firstDelay: Duration
    private let longestDelay: Duration
    private let isStopRequested: @Sendable () -> Bool
    private let log: @Sendable (String) -> Void
    private let sessions = Mutex<Set<Int32>>([])

    /// A retrier for `command`.
    ///
    /// - Parameters:
    ///   - budget: how long to go on reconnecting after the first loss; zero disables it.
    ///   - firstDelay: the wait before the first new attempt; each next wait doubles, up to
    ///     `longestDelay`.
    ///   - isStopRequested: true when the operator asked the command to stop: no more attempts.
    ///   - log: receives one line per new attempt, saying what was lost and what happens next.
    public init(command: String, budget: Duration, firstDelay: Duration = .milliseconds(250),
                longestDelay: Duration = .seconds(2), isStopRequested: @escaping @Sendable () -> Bool = { false },
                log: @escaping @Sendable (String) -> Void) {
        self.command = command
        self.budget = budget
        self.firstDelay = firstDelay
        self.longestDelay = longestDelay
        self.isStopRequested = isStopRequested
        self.log = log
    }

    /// Records that an attempt connected, as the server process `backendPID`.
    public func connected(backendPID: Int32) {
        sessions.withLock { _ = $0.insert(backendPID) }
    }

    /// Runs `attempt` until it returns, throws what is not a lost connection, or the budget is
    /// spent (then the last loss is thrown).
    public func run<T: Sendable>(_ attempt: () async throws -> T) async throws -> T {
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        var delay = firstDelay
        var retries = 0
        while true {
            do {
                return try await attempt()
            } catch {
                let own = sessions.withLock { $0 }
                guard budget > .zero, !own.isEmpty, !isStopRequested(), let loss = ConnectionLoss(error, ownSessions: own) else {
                    throw error
                }
                let now = clock.now
                let end = deadline ?? now + budget
                deadline = end
                guard now + delay <= end else {
                    log("\(command): \(loss); gave up reconnecting after \(DurationText.format(budget)) (--reconnect-for)")
                    throw error
                }
                retries += 1
                log("\(command): \(loss); reconnecting in \(DurationText.format(delay)) to finish it (attempt \(retries + 1), "
                    + "\(DurationText.format(end - now)) of \(DurationText.format(budget)) left)")
                try await Task.sleep(for: delay)
                if isStopRequested() { throw error }
                delay = min(delay * 2, longestDelay)
            }
        }
    }
}
