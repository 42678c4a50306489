import Synchronization

/// A one-time event that async code can wait for: a thread's end, for example.
public final class Completion: Sendable {
    private let state = Mutex<(isFinished: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// A completion that has not happened yet.
    public init() {}

    /// Marks it done and resumes every waiter; later calls do nothing.
    public func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isFinished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Whether it is done.
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Suspends until it is done (at once if it already is).
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isFinished = state.withLock { state -> Bool in
                if !state.isFinished { state.waiters.append(continuation) }
                return state.isFinished
            }
            if isFinished { continuation.resume() }
        }
    }
}
