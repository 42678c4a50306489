import Synchronization

/// Counts a pool's connections as they open and close, and its pipelined transactions by who
/// waited for the server.
final class PoolCounters: Sendable {
    private struct Counts {
        var open = 0
        var peak = 0
        var opened = 0
        var polled = 0
        var drained = 0
    }

    private let counts = Mutex(Counts())

    func opened() {
        counts.withLock {
            $0.open += 1
            $0.opened += 1
            $0.peak = max($0.peak, $0.open)
        }
    }

    func closed() {
        counts.withLock { $0.open -= 1 }
    }

    /// A pipelined transaction was sent without a thread waiting for its answer.
    func polled() {
        counts.withLock { $0.polled += 1 }
    }

    /// A pipelined transaction's request did not fit the socket; the rest waits in libpq.
    func writingAsTheSocketDrains() {
        counts.withLock { $0.drained += 1 }
    }

    /// Pipelined transactions whose requests were written as the socket drained.
    var writtenAsTheSocketDrained: Int { counts.withLock { $0.drained } }

    /// Pipelined transactions the poller read the answers of.
    var polledTransactions: Int { counts.withLock { $0.polled } }

    var snapshot: (open: Int, peak: Int, opened: Int) {
        counts.withLock { ($0.open, $0.peak, $0.opened) }
    }
}
