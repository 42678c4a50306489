import Cutover
import Foundation
import PostgresClient

/// What one backfill worker does around each of its batches: before it, apply what an operator
/// asked from another terminal (a pause, a retune), wait for the standbys and for the throttle;
/// after it, size the next batch to the target time and rest by the nice ratio.
///
/// One per worker, used on that worker's thread and connection only; a backfill of several
/// workers has each of them pace itself against the same ceilings, which are the server's
/// (its active sessions, its standbys' lag, the operator's throttle query), so the ceilings
/// hold for the whole.
final class BackfillPacer {
    private let plan: String
    private let options: BackfillEngine.Options
    private let log: (String) -> Void
    private let clock = ContinuousClock()
    private(set) var sizer: BatchSizer
    private let monitor: StandbyLagMonitor?
    private let gate: BackfillThrottleGate
    private var pace: BackfillEngine.Options
    private var applied = BackfillControl()
    private var measuredAt: ContinuousClock.Instant?

    /// A pacer for `plan`'s backfill at `options`' pace; `siblings` gives the server processes
    /// of the backfill's other workers, which the active sessions ceiling does not count.
    init(plan: String, options: BackfillEngine.Options, log: @escaping (String) -> Void,
         siblings: @escaping () -> [Int32] = { [] }) {
        self.plan = plan
        self.options = options
        self.log = log
        sizer = BatchSizer(initial: options.batchSize, target: options.throttle.targetBatchTime)
        monitor = options.replicaLag.map { StandbyLagMonitor(ceiling: $0, log: log) }
        gate = BackfillThrottleGate(options.throttle, log: log, siblings: siblings)
        pace = options
    }

    /// Rows the next batch asks for.
    var batchSize: Int { sizer.size }

    /// Sets `progress`'s pace fields as the pacer starts.
    func start(_ progress: inout BackfillEngine.Progress) {
        progress.batchSize = sizer.size
        progress.niceRatio = options.niceRatio
        progress.targetBatchTime = sizer.target
    }

    /// Everything before a batch: the operator's pause and retune, the standbys, the throttle.
    ///
    /// - Throws: ``BackfillError/stopped(converted:)`` when a stop is requested while waiting.
    func beforeBatch(on connection: PostgresConnection, progress current: inout BackfillEngine.Progress,
                     isStopRequested: () -> Bool) throws {
        let control = try waitWhilePaused(on: connection, progress: &current, isStopRequested: isStopRequested)
        if control != applied {
            let retune = control.retuneText
            if !retune.isEmpty && retune != applied.retuneText { log("backfill retuned by \(control.changedBy): \(retune), from this batch on") }
            applied = control
            pace.niceRatio = control.niceRatio ?? options.niceRatio
            sizer.retarget(control.targetBatchTime ?? options.throttle.targetBatchTime)
            gate.throttle.maximumActiveSessions = control.maximumActiveSessions ?? options.throttle.maximumActiveSessions
            if let monitor, let original = options.replicaLag { monitor.ceiling.maximum = control.maximumReplicaLag ?? original.maximum }
            current.niceRatio = pace.niceRatio
            current.targetBatchTime = sizer.target
        }
        measuredAt = nil
        if let monitor {
            let wait = try monitor.waitUnderCeiling(on: connection, converted: current.converted, isStopRequested: isStopRequested)
            measuredAt = monitor.measuredAt
            if let waited = wait.waited {
                current.replicaWaits += 1
                current.replicaWaited += waited
            }
            current.replicaLagAtStart = wait.lags.map(\.lag).max()
        }
        if let held = try gate.waitWhileThrottled(on: connection, converted: current.converted, isStopRequested: isStopRequested) {
            current.throttleWaits += 1
            current.throttled += held.waited
            current.lastThrottleReason = held.reason
        }
    }

    /// Everything after a batch that took `batchTime`: the next batch's size and the standbys'
    /// lag now. Returns the rest to take before the next batch.
    func afterBatch(time batchTime: Duration, endedRange: Bool, on connection: PostgresConnection,
                    progress current: inout BackfillEngine.Progress) throws -> Duration {
        sizer.record(time: batchTime, endedPass: endedRange)
        current.lastBatchTime = batchTime
        current.batchSize = sizer.size
        if let monitor {
            current.replicaLagAfter = try monitor.measure(on: connection).map(\.lag).max()
            if let before = measuredAt, let after = monitor.measuredAt { current.lastBatchSpan = after - before }
        }
        return pace.pause(after: batchTime)
    }

    /// Rests for `pause`, counting it in `progress`.
    func rest(_ pause: Duration, progress: inout BackfillEngine.Progress) {
        guard pause > .zero else { return }
        Thread.sleep(forTimeInterval: pause / .seconds(1))
        progress.paused += pause
    }

    /// Waits while an operator has paused the backfill, saying so at most every 5 s, and
    /// returns what the operator asks now.
    private func waitWhilePaused(on connection: PostgresConnection, progress: inout BackfillEngine.Progress,
                                 isStopRequested: () -> Bool) throws -> BackfillControl {
        var control = try BackfillControl.read(plan: plan, on: connection) ?? BackfillControl()
        guard control.isPaused else { return control }
        let began = clock.now
        var lastNotice: ContinuousClock.Instant?
        while control.isPaused {
            if isStopRequested() { throw BackfillError.stopped(converted: progress.converted) }
            if lastNotice.map({ clock.now - $0 >= .seconds(5) }) ?? true {
                lastNotice = clock.now
                log("backfill paused by \(control.changedBy) at \(control.changedAt), \(progress.converted) of \(progress.total) rows converted: 'phase backfill --resume' lets it go on")
            }
            Thread.sleep(forTimeInterval: 0.1)
            control = try BackfillControl.read(plan: plan, on: connection) ?? BackfillControl()
        }
        progress.pausedByOperator += clock.now - began
        log("backfill resumed by \(control.changedBy)")
        return control
    }
}
