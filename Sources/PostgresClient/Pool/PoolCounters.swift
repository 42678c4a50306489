import Synchronization

/// Counts a pool's connections as they open and close.
final class PoolCounters: Sendable {
    private struct Counts {
        var open = 0
        var peak = 0
        var opened = 0
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

    var snapshot: (open: Int, peak: Int, opened: Int) {
        counts.withLock { ($0.open, $0.peak, $0.opened) }
    }
}
