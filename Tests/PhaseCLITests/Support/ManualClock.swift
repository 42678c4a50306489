import PhaseCLI
import Synchronization

/// A clock that moves only when a test moves it.
final class ManualClock: Sendable {
    private let now = Mutex(Duration.zero)

    var progressClock: ProgressClock {
        ProgressClock { self.now.withLock { $0 } }
    }

    func advance(by step: Duration) {
        now.withLock { $0 += step }
    }
}
