import Cutover
import Dispatch
import Foundation
import PostgresClient
import Synchronization

extension BackfillEngine {
    /// Converts `ranges` on up to ``Options/workers`` threads, each with a session of its own,
    /// taking the next range when it finishes one; the calling thread reports their sum as
    /// they go. Returns when every worker has stopped; throws the first worker's error then,
    /// after the others have finished what they could.
    func runWorkers(over ranges: [BackfillRanges.Range], from start: Progress, began: ContinuousClock.Instant,
                    on connection: PostgresConnection, openSession: @escaping @Sendable () throws -> PostgresConnection,
                    isStopRequested: @escaping @Sendable () -> Bool, progress: (Progress) -> Void,
                    log: @escaping @Sendable (String) -> Void, attempt: Int64?) throws -> Progress {
        let count = max(1, min(options.workers, ranges.count))
        var first = start
        first.workers = count
        let board = WorkerBoard(ranges: ranges, progress: first, workers: count)
        log("backfill: \(count) workers over \(ranges.count) key ranges")
        for index in 0..<count {
            let thread = Thread { [self] in
                board.finish(worker: index, error: runWorker(index, count: count, board: board, openSession: openSession,
                                                             isStopRequested: isStopRequested, log: log))
            }
            thread.name = "cutover-backfill-\(index + 1)"
            thread.start()
        }
        progress(first)
        var reported = first
        let clock = ContinuousClock()
        while true {
            let (current, isFinished) = board.waitForChange(timeout: .milliseconds(200))
            if current != reported {
                reported = current
                progress(current)
                if let attempt {
                    try write(Report(attempt: attempt, progress: current, elapsed: clock.now - began), converted: 0,
                              batchSize: Int64(current.batchSize), on: connection)
                }
            }
            if isFinished { break }
        }
        let (current, error) = board.outcome
        if let error {
            if case BackfillError.stopped = error { throw BackfillError.stopped(converted: current.converted) }
            throw error
        }
        return current
    }

    /// One worker: opens its session and converts ranges from `board` until none is left.
    private func runWorker(_ index: Int, count: Int, board: WorkerBoard,
                           openSession: @Sendable () throws -> PostgresConnection,
                           isStopRequested: () -> Bool, log: @escaping @Sendable (String) -> Void) -> (any Error)? {
        do {
            let session = try openSession()
            let pid = try session.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
            board.register(pid: pid)
            let pacer = BackfillPacer(plan: plan, options: options, log: { log("worker \(index + 1) of \(count): " + $0) },
                                      siblings: { board.pids })
            var mine = board.snapshot
            pacer.start(&mine)
            let clock = ContinuousClock()
            while let range = board.nextRange() {
                try BackfillRanges.take(plan: plan, range: range.number, on: session)
                var cursor = range.resumeAfter
                while true {
                    if isStopRequested() { throw BackfillError.stopped(converted: board.snapshot.converted) }
                    mine.converted = board.snapshot.converted
                    try pacer.beforeBatch(on: session, progress: &mine, isStopRequested: isStopRequested)
                    let began = clock.now
                    let batch = try runBatch(after: cursor, size: pacer.batchSize,
                                             in: .range(number: range.number, upper: range.upper), report: nil, on: session)
                    let pause = try pacer.afterBatch(time: clock.now - began, endedRange: batch.lastKey == nil, on: session,
                                                     progress: &mine)
                    board.record(batchOf: batch.converted, worker: index, pace: mine)
                    guard let key = batch.lastKey else { break }
                    cursor = key
                    pacer.rest(pause, progress: &mine)
                    board.record(batchOf: nil, worker: index, pace: mine)
                }
            }
            return nil
        } catch {
            return error
        }
    }
}

/// What the workers of one parallel backfill share: the ranges not yet taken, their server
/// processes, each one's pace, the rows converted in all, and how each ended.
final class WorkerBoard: Sendable {
    private struct State {
        var ranges: [BackfillRanges.Range]
        var progress: BackfillEngine.Progress
        var paces: [BackfillEngine.Progress?]
        var pids: [Int32] = []
        var finished = 0
        var error: (any Error)?
    }
    private let state: Mutex<State>
    private let changed = DispatchSemaphore(value: 0)
    private let workers: Int

    init(ranges: [BackfillRanges.Range], progress: BackfillEngine.Progress, workers: Int) {
        state = Mutex(State(ranges: ranges, progress: progress, paces: Array(repeating: nil, count: workers)))
        self.workers = workers
    }

    /// The sum of every worker's progress now.
    var snapshot: BackfillEngine.Progress { state.withLock { $0.progress } }

    /// The server processes of the workers, which none of them counts as the live load's.
    var pids: [Int32] { state.withLock { $0.pids } }

    /// The sum, and the first worker's error, once every worker has finished.
    var outcome: (BackfillEngine.Progress, (any Error)?) { state.withLock { ($0.progress, $0.error) } }

    func register(pid: Int32) { state.withLock { $0.pids.append(pid) } }

    /// The next range no worker has taken, nil when none is left.
    func nextRange() -> BackfillRanges.Range? {
        state.withLock { $0.ranges.isEmpty ? nil : $0.ranges.removeFirst() }
    }

    /// Adds a worker's batch of `converted` rows (nil: no batch, only its pace changed) and its
    /// pace now to the sum.
    ///
    /// The sum's waits are the longest any worker waited, since the workers wait side by side;
    /// its batch size and times are those of the worker that reported last.
    func record(batchOf converted: Int64?, worker: Int, pace: BackfillEngine.Progress) {
        state.withLock { state in
            state.paces[worker] = pace
            if let converted {
                state.progress.converted += converted
                state.progress.batches += 1
            }
            let paces = state.paces.compactMap { $0 }
            state.progress.batchSize = pace.batchSize
            state.progress.lastBatchTime = pace.lastBatchTime
            state.progress.niceRatio = pace.niceRatio
            state.progress.targetBatchTime = pace.targetBatchTime
            state.progress.replicaLagAtStart = pace.replicaLagAtStart
            state.progress.replicaLagAfter = pace.replicaLagAfter
            state.progress.lastBatchSpan = pace.lastBatchSpan
            if let reason = pace.lastThrottleReason { state.progress.lastThrottleReason = reason }
            state.progress.throttleWaits = paces.map(\.throttleWaits).reduce(0, +)
            state.progress.replicaWaits = paces.map(\.replicaWaits).reduce(0, +)
            state.progress.throttled = paces.map(\.throttled).max() ?? .zero
            state.progress.replicaWaited = paces.map(\.replicaWaited).max() ?? .zero
            state.progress.pausedByOperator = paces.map(\.pausedByOperator).max() ?? .zero
            state.progress.paused = paces.map(\.paused).max() ?? .zero
        }
        changed.signal()
    }

    /// Records that `worker` stopped, with its error if it failed; the first error is kept.
    func finish(worker: Int, error: (any Error)?) {
        state.withLock { state in
            state.finished += 1
            if state.error == nil, let error { state.error = error }
        }
        changed.signal()
    }

    /// Waits until a worker reports or `timeout` passes; returns the sum and whether every
    /// worker has finished.
    func waitForChange(timeout: Duration) -> (BackfillEngine.Progress, Bool) {
        _ = changed.wait(timeout: .now() + .milliseconds(Int(DurationText.milliseconds(in: timeout))))
        return state.withLock { ($0.progress, $0.finished == workers) }
    }
}
