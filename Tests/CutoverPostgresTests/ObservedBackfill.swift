import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Synchronization

/// What a backfill running on a thread of its own reported: its log lines and its progress.
final class ObservedBackfill: Sendable {
    let lines = Mutex<[String]>([])
    let progress = Mutex<[BackfillEngine.Progress]>([])

    func line(containing text: String) -> String? { lines.withLock { $0.first { $0.contains(text) } } }
    func count(ofLinesContaining text: String) -> Int { lines.withLock { $0.filter { $0.contains(text) }.count } }
    var latest: BackfillEngine.Progress? { progress.withLock { $0.last } }

    /// Runs `engine` on a session `connect` opens, on a thread of its own, keeping what it reports.
    static func start(_ engine: BackfillEngine, connect: @escaping @Sendable () throws -> PostgresConnection)
        -> (Task<BackfillEngine.Progress, any Error>, ObservedBackfill) {
        let observed = ObservedBackfill()
        let backfill = Task {
            try await onThread {
                try engine.run(on: connect(),
                               progress: { progress in observed.progress.withLock { $0.append(progress) } },
                               log: { line in observed.lines.withLock { $0.append(line) } })
            }
        }
        return (backfill, observed)
    }

    /// Waits until `condition` holds, for up to a minute; false when it never did.
    static func waitFor(_ condition: @Sendable () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
