import Cutover
import Dispatch
import Foundation
import PostgresClient
import Synchronization

extension BackfillEngine {
    /// Converts `ranges` on up to ``Options/workers`` threads, each with a session of its own,
    /// taking the next range when it finishes one, all at `pacer`'s pace; the calling thread
    /// reports their sum and the pace as they go, and lets `landCount` set the total from a
    /// count that lands meanwhile. Returns when every worker has stopped; throws the first
    /// worker's error then, after the others have finished what they could. When the calling
    /// thread's own work fails (its session lost while it reports), it tells every worker to
    /// stop after its batch in flight and waits for all of them to end before it throws.
    func runWorkers(over ranges: [BackfillRanges.Range], from start: Progress, pacer: BackfillPacer, began: ContinuousClock.Instant,
                    on connection: PostgresConnection, openSession: @escaping @Sendable () throws -> PostgresConnection,
                    isStopRequested: @escaping @Sendable () -> Bool, progress: (Progress) -> Void,
                    log: @escaping @Sendable (String) -> Void, attempt: Int64?, skipped: inout SkippedRows,
                    landCount: (inout Progress) throws -> Void) throws -> Progress {
        let count = max(1, min(options.workers, ranges.count))
        var first = start
        first.workers = count
        pacer.share(among: count)
        defer { pacer.share(among: 1) }
        pacer.apply(to: &first)
        let board = WorkerBoard(ranges: ranges, progress: first, workers: count)
        log("backfill: \(count) workers over \(ranges.count) key ranges")
        let isStopping: @Sendable () -> Bool = { isStopRequested() || board.isStopping }
        for index in 0..<count {
            let thread = Thread { [self] in
                board.finish(error: runWorker(board: board, pacer: pacer, openSession: openSession, isStopRequested: isStopping))
            }
            thread.name = "cutover-backfill-\(index + 1)"
            thread.start()
        }
        progress(first)
        var reported = first
        // Workers left converting after a throw would race the next run over the same ranges (a
        // reconnecting step's retry, in the same process), and convert on after the run's lease,
        // which its lost session held, is gone. Once they are joined, what they converted is the
        // last progress reported, whichever way this leaves: a stop that cancelled this thread's
        // own statement says how far the cursors got, not how far the last report did.
        defer {
            board.stopWorkers()
            var last = board.snapshot
            pacer.apply(to: &last)
            if last.converted != reported.converted || last.batches != reported.batches { progress(last) }
        }
        let clock = ContinuousClock()
        while true {
            let isFinished = board.waitForChange(timeout: .milliseconds(200))
            var current = board.snapshot
            let total = current.total
            try landCount(&current)
            if current.total != total {
                board.count(total: current.total, convertedByApplication: current.convertedByApplication)
            }
            pacer.apply(to: &current)
            if current != reported {
                let recordsBatch = current.batches != reported.batches
                reported = current
                progress(current)
                if let attempt {
                    try write(Report(attempt: attempt, progress: current, elapsed: clock.now - began), converted: 0,
                              batchSize: Int64(current.batchSize), recordsBatch: recordsBatch, on: connection)
                }
            }
            if isFinished { break }
        }
        var (current, error) = board.outcome
        skipped = board.skipped
        pacer.apply(to: &current)
        if let error {
            if case BackfillError.stopped = error { throw BackfillError.stopped(converted: current.converted) }
            throw error
        }
        return current
    }

    /// One worker: opens its session and converts ranges from `board` until none is left, or
    /// `isStopRequested` says to stop (the operator, or the calling thread through `board`).
    private func runWorker(board: WorkerBoard, pacer: BackfillPacer, openSession: @Sendable () throws -> PostgresConnection,
                           isStopRequested: () -> Bool) -> (any Error)? {
        do {
            let session = try openSession()
            pacer.addSibling(try session.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid"))
            let clock = ContinuousClock()
            while let range = board.nextRange() {
                try BackfillRanges.take(plan: plan, range: range.number, on: session)
                var cursor = range.resumeAfter
                while true {
                    if isStopRequested() { throw BackfillError.stopped(converted: board.snapshot.converted) }
                    var mine = board.snapshot
                    // The board's calling thread writes what the pace says when a hold begins or ends.
                    let clearance = try pacer.beforeBatch(on: session, progress: &mine, isStopRequested: isStopRequested) { _ in
                        board.poke()
                    }
                    let began = clock.now
                    let batch = try runBatch(after: cursor, size: clearance.batchSize,
                                             in: .range(number: range.number, upper: range.upper), report: nil, on: session)
                    let pause = try pacer.afterBatch(clearance, time: clock.now - began, endedRange: batch.lastKey == nil,
                                                     on: session, progress: &mine)
                    board.record(batchOf: batch.converted, skipped: batch.skipped, after: cursor, through: batch.lastKey ?? range.upper,
                                 directWaitsRunOut: directBatches.waitsRunOut)
                    guard let key = batch.lastKey else { break }
                    cursor = key
                    pacer.rest(pause, progress: &mine)
                }
            }
            return nil
        } catch {
            return error
        }
    }
}

/// What the workers of one parallel backfill share besides their pace (``BackfillPacer``): the
/// ranges not yet taken, the rows converted and batches run in all, and how each worker ended.
final class WorkerBoard: Sendable {
    private struct State {
        var ranges: [BackfillRanges.Range]
        var progress: BackfillEngine.Progress
        var finished = 0
        var error: (any Error)?
        var skipped = BackfillEngine.SkippedRows()
        var isStopping = false
    }
    private let state: Mutex<State>
    private let changed = DispatchSemaphore(value: 0)
    private let workers: Int

    init(ranges: [BackfillRanges.Range], progress: BackfillEngine.Progress, workers: Int) {
        state = Mutex(State(ranges: ranges, progress: progress))
        self.workers = workers
    }

    /// The rows converted and batches run by every worker now.
    var snapshot: BackfillEngine.Progress { state.withLock { $0.progress } }

    /// The sum, and the first worker's error, once every worker has finished.
    var outcome: (BackfillEngine.Progress, (any Error)?) { state.withLock { ($0.progress, $0.error) } }

    /// The next range no worker has taken, nil when none is left.
    func nextRange() -> BackfillRanges.Range? {
        state.withLock { $0.ranges.isEmpty ? nil : $0.ranges.removeFirst() }
    }

    /// What every worker's batches skipped, in the order they ran.
    var skipped: BackfillEngine.SkippedRows { state.withLock { $0.skipped } }

    /// Adds a worker's batch of `converted` rows to the sum, and the rows it skipped in the keys
    /// after `after` through `last`; `directWaitsRunOut`: the backfill's direct batches whose wait ran out so far.
    func record(batchOf converted: Int64, skipped: Int64?, after: String?, through last: String?, directWaitsRunOut: Int) {
        state.withLock { state in
            state.progress.converted += converted
            state.progress.batches += 1
            state.progress.directWaitsRunOut = max(state.progress.directWaitsRunOut, directWaitsRunOut)
            state.skipped.note(skipped, after: after, through: last)
        }
        changed.signal()
    }

    /// Sets the total and the rows the application converted, as a count found them.
    func count(total: Int64?, convertedByApplication: Int64) {
        state.withLock { state in
            state.progress.total = total
            state.progress.convertedByApplication = convertedByApplication
        }
    }

    /// Whether the calling thread has told the workers to stop after their batch in flight.
    var isStopping: Bool { state.withLock { $0.isStopping } }

    /// Tells every worker to stop after its batch in flight, and waits until all have finished.
    func stopWorkers() {
        state.withLock { $0.isStopping = true }
        while !isEveryWorkerFinished { _ = changed.wait(timeout: .now() + .milliseconds(200)) }
    }

    /// Wakes the calling thread to report: the pace changed.
    func poke() {
        changed.signal()
    }

    /// Records that a worker stopped, with its error if it failed; the first error is kept.
    func finish(error: (any Error)?) {
        state.withLock { state in
            state.finished += 1
            if state.error == nil, let error { state.error = error }
        }
        changed.signal()
    }

    /// Waits until a worker reports or `timeout` passes; returns whether every worker has finished.
    func waitForChange(timeout: Duration) -> Bool {
        _ = changed.wait(timeout: .now() + .milliseconds(Int(DurationText.milliseconds(in: timeout))))
        return isEveryWorkerFinished
    }

    private var isEveryWorkerFinished: Bool { state.withLock { $0.finished == workers } }
}
