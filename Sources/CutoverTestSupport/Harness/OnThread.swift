import Dispatch
import PostgresClient
import Synchronization

/// Runs blocking work on a thread of its own, so that a test does not stall Swift's
/// cooperative pool while it waits.
///
/// The work stays in the calling task: it runs under a preference for an executor whose one
/// thread is its own, so the task's locals go with it, and Swift Testing knows which test an
/// `#expect` or `#require` inside `body` belongs to (on a thread started apart, it would report
/// the issue against an unknown test).
@discardableResult
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let executor = OwnThreadExecutor(named: "cutover-test-blocking")
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { try body() }
}

/// A task executor with one thread, which runs the jobs enqueued on it in turn until
/// ``finish()``; a job enqueued after that (none is expected) runs on a thread of its own.
final class OwnThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var isFinished = false
    }

    private let queue = Mutex(Queue())
    /// Signalled once for each job enqueued and once by ``finish()``.
    private let arrivals = DispatchSemaphore(value: 0)
    private let name: String

    init(named name: String) {
        self.name = name
        JoinedThread(named: name).start { [self] in runJobs() }
    }

    func enqueue(_ job: UnownedJob) {
        let isQueued = queue.withLock { queue in
            guard !queue.isFinished else { return false }
            queue.jobs.append(job)
            return true
        }
        if isQueued {
            arrivals.signal()
        } else {
            let executor = asUnownedTaskExecutor()
            JoinedThread(named: name).start { job.runSynchronously(on: executor) }
        }
    }

    /// Lets the thread end once the jobs already enqueued have run.
    func finish() {
        queue.withLock { $0.isFinished = true }
        arrivals.signal()
    }

    /// On the executor's thread.
    private func runJobs() {
        let executor = asUnownedTaskExecutor()
        // Each signal stands for a job queued or the finish: a job is there, or the thread ends.
        while true {
            arrivals.wait()
            guard let job = queue.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { return }
            job.runSynchronously(on: executor)
        }
    }
}
