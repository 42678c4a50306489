#if os(Linux)
import Foundation
import Synchronization

/// The process's socket pollers, one per core (at most four), and the task executor they make
/// together.
///
/// Each connection is watched by one poller, given to it in turn when the connection's worker
/// starts. One thread per core, like an event loop per core, keeps the reading of answers from
/// being bound to one core's share of the machine: on a busy machine the scheduler gives each
/// thread its share, and a single thread serving every connection gets only one.
///
/// As an executor it runs a job on the poller whose thread enqueues it (the task that poller
/// has just resumed goes on where its answer was read), and a job from elsewhere on the next
/// poller in turn.
final class PollerGroup: TaskExecutor {
    /// The group, started when first needed; nil if the system refuses an epoll instance, and
    /// then connections wait on their own threads.
    static let shared: PollerGroup? = PollerGroup(count: min(max(1, ProcessInfo.processInfo.activeProcessorCount), 4))

    let pollers: [SocketPoller]
    private let nextConnection = Atomic<Int>(0)
    private let nextJob = Atomic<Int>(0)

    private init?(count: Int) {
        let pollers = (0..<count).compactMap { SocketPoller(name: "cutover-poll-\($0)") }
        guard !pollers.isEmpty else { return nil }
        self.pollers = pollers
        for poller in pollers { poller.runJobs(on: asUnownedTaskExecutor()) }
    }

    /// The poller for a new connection: each in turn.
    func pollerForConnection() -> SocketPoller {
        pollers[Self.turn(nextConnection, of: pollers.count)]
    }

    /// Whether the calling thread is one of the pollers'.
    var isCurrentThread: Bool { pollers.contains { $0.isCurrentThread } }

    func enqueue(_ job: UnownedJob) {
        if let current = pollers.first(where: { $0.isCurrentThread }) {
            current.enqueue(job)
        } else {
            pollers[Self.turn(nextJob, of: pollers.count)].enqueue(job)
        }
    }

    private static func turn(_ counter: borrowing Atomic<Int>, of count: Int) -> Int {
        let (_, next) = counter.wrappingAdd(1, ordering: .relaxed)
        return Int(UInt(bitPattern: next) % UInt(count))
    }
}
#endif
