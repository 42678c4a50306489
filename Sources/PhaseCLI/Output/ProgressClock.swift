/// The time elapsed since some fixed start, as a ``ProgressReporter`` reads it.
///
/// Tests give it a clock they move by hand, so the reporter's cadence can be checked exactly.
public struct ProgressClock: Sendable {
    private let read: @Sendable () -> Duration

    /// A clock that reports whatever `elapsed` returns; it must never go backwards.
    public init(elapsed: @escaping @Sendable () -> Duration) {
        read = elapsed
    }

    /// A clock reading real, monotonic time from the moment this is called.
    public static func continuous() -> ProgressClock {
        let start = ContinuousClock.now
        return ProgressClock { ContinuousClock.now - start }
    }

    /// The time elapsed since the start.
    public func elapsed() -> Duration {
        read()
    }
}
