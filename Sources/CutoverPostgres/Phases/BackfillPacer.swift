import Cutover
import Foundation
import PostgresClient

/// The pace of one backfill, shared by all its workers: before a batch, what an operator asked
/// from another terminal (a pause, a retune), the standbys' lag and the throttle; after it, the
/// next batch's size and the rest.
///
/// One pacer serves the whole backfill, its workers and the passes after them. Before a batch,
/// one worker at a time checks, on its own session, for every worker: while an operator's pause,
/// a standby over the replica lag ceiling or the throttle holds it, the others wait for its answer,
/// so all of them hold, and all of them go on together when it lets go. Its answer stands for as
/// many batches as there are workers and no longer than the last batch and its rest took
/// (``BackfillPace``), so N workers send about the checks one would. One batch size serves every
/// worker and follows every worker's batches (``BatchSizer``). The time held by the throttle, by
/// standbys and by a pause is the wall time the backfill was held, counted once.
///
/// After each of its batches a worker rests ``BackfillEngine/Options/pause(after:)`` of that
/// batch's time, as one worker does: each of the backfill's sessions works at most 1/(1 + nice
/// ratio) of the time, and N workers together keep at most N/(1 + nice ratio) sessions busy.
final class BackfillPacer: @unchecked Sendable {
    // Safe to share between worker threads: `pace`, `siblings`, `count` and `failure` are read and written
    // only while `condition` is locked; `gate`, `monitor` and `applied` only by the worker holding the pace's
    // turn (taken and given back under the lock), one worker at a time; the rest never changes.

    /// What a worker runs its next batch with.
    struct Clearance {
        /// Rows the batch asks for.
        let batchSize: Int
        /// When this worker measured the standbys' lag before the batch; nil when it did not
        /// check itself, or there is no replica lag ceiling.
        let measuredAt: ContinuousClock.Instant?
    }

    private let plan: String
    private let options: BackfillEngine.Options
    private let log: @Sendable (String) -> Void
    private let clock = ContinuousClock()
    private let condition = NSCondition()
    private var pace: BackfillPace
    private var siblings: [Int32] = []
    private var count: BackgroundRemainingCount?
    private var failure: BackfillError?
    private let monitor: StandbyLagMonitor?
    private let gate: BackfillThrottleGate
    private var applied = BackfillControl()

    /// A pacer for `plan`'s backfill at `options`' pace, for one worker until ``share(among:)``.
    init(plan: String, options: BackfillEngine.Options, log: @escaping @Sendable (String) -> Void) {
        self.plan = plan
        self.options = options
        self.log = log
        pace = BackfillPace(options)
        monitor = options.replicaLag.map { StandbyLagMonitor(ceiling: $0, log: log) }
        gate = BackfillThrottleGate(options.throttle, log: log)
        // Unowned: the gate is the pacer's own and lives no longer.
        gate.excluded = { [unowned self] in locked { _ in siblings + (count?.sessionPID.map { [$0] } ?? []) } }
    }

    /// Shares the pace among `workers` from now on, whose server processes the active sessions
    /// ceiling does not count (`siblings`; none once the workers are done).
    func share(among workers: Int, siblings: [Int32] = []) {
        locked { pace in
            pace.share(among: workers)
            self.siblings = siblings
        }
    }

    /// Adds a worker's server process to those the active sessions ceiling does not count.
    func addSibling(_ pid: Int32) {
        locked { _ in siblings.append(pid) }
    }

    /// Leaves the session of the backfill's own count of the rows still to convert out of the
    /// active sessions ceiling while it reads: the backfill must not hold itself back.
    func excludeSession(of count: BackgroundRemainingCount?) {
        locked { _ in self.count = count }
    }

    /// Rows the next batch asks for.
    var batchSize: Int { locked { $0.sizer.size } }

    /// Sets `progress`'s pace fields to the backfill's pace now.
    func apply(to progress: inout BackfillEngine.Progress) {
        locked { $0.apply(to: &progress) }
    }

    /// Everything before a batch: waits while another worker checks, or checks for all (the
    /// operator's pause and retune, the standbys, the throttle).
    ///
    /// - Parameters:
    ///   - progress: gets the pace's fields; its rows converted are those the notices give.
    ///   - report: hears the backfill's progress and pace when a hold begins and when it ends,
    ///     from the worker that checks.
    /// - Throws: ``BackfillError/stopped(converted:)`` when a stop is requested while waiting;
    ///   ``BackfillError/throttleQueryFailed(_:)``, to every worker, when the throttle query
    ///   fails the first time it runs.
    func beforeBatch(on connection: PostgresConnection, progress current: inout BackfillEngine.Progress,
                     isStopRequested: () -> Bool, report: (BackfillEngine.Progress) throws -> Void = { _ in }) throws -> Clearance {
        condition.lock()
        var turn = Turn.wait
        while true {
            if let failure {
                condition.unlock()
                throw failure
            }
            turn = pace.turn(at: clock.now)
            guard turn == .wait else { break }
            if isStopRequested() {
                condition.unlock()
                throw BackfillError.stopped(converted: current.converted)
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
        if turn == .go {
            defer { condition.unlock() }
            pace.apply(to: &current)
            return Clearance(batchSize: pace.sizer.size, measuredAt: nil)
        }
        condition.unlock()
        do {
            let measuredAt = try check(on: connection, progress: &current, isStopRequested: isStopRequested, report: report)
            return locked { pace in
                pace.checked(at: clock.now)
                condition.broadcast()
                pace.apply(to: &current)
                return Clearance(batchSize: pace.sizer.size, measuredAt: measuredAt)
            }
        } catch {
            locked { pace in
                if let error = error as? BackfillError, case .throttleQueryFailed = error { failure = error }
                pace.checkFailed()
                condition.broadcast()
            }
            throw error
        }
    }

    private typealias Turn = BackfillPace.Turn

    /// The checks, by the worker whose turn it is; returns when it measured the standbys' lag.
    private func check(on connection: PostgresConnection, progress current: inout BackfillEngine.Progress,
                       isStopRequested: () -> Bool, report: (BackfillEngine.Progress) throws -> Void) throws -> ContinuousClock.Instant? {
        let control = try waitWhilePaused(on: connection, progress: &current, isStopRequested: isStopRequested)
        if control != applied {
            let retune = control.retuneText
            if !retune.isEmpty && retune != applied.retuneText { log("backfill retuned by \(control.changedBy): \(retune), from this batch on") }
            applied = control
            gate.throttle.maximumActiveSessions = control.maximumActiveSessions ?? options.throttle.maximumActiveSessions
            if let monitor, let original = options.replicaLag { monitor.ceiling.maximum = control.maximumReplicaLag ?? original.maximum }
            locked { $0.retune(niceRatio: control.niceRatio ?? options.niceRatio,
                               targetBatchTime: control.targetBatchTime ?? options.throttle.targetBatchTime) }
        }
        var wasHeld = false
        func holds(_ reason: String) throws {
            wasHeld = true
            var held = current
            locked { pace in
                pace.holds(reason)
                pace.apply(to: &held)
            }
            try report(held)
        }
        var measuredAt: ContinuousClock.Instant?
        if let monitor {
            let wait = try monitor.waitUnderCeiling(on: connection, converted: current.converted, isStopRequested: isStopRequested,
                                                    holds: holds)
            measuredAt = monitor.measuredAt
            locked { pace in
                if let waited = wait.waited { pace.standbysCaughtUp(after: waited) }
                pace.measured(lagAtStart: wait.lags.map(\.lag).max())
            }
        }
        if let held = try gate.waitWhileThrottled(on: connection, converted: current.converted, isStopRequested: isStopRequested,
                                                  holds: holds) {
            locked { $0.throttleLetGo(reason: held.reason, after: held.waited) }
        }
        if wasHeld {
            var released = current
            apply(to: &released)
            try report(released)
        }
        return measuredAt
    }

    /// Everything after a batch that took `batchTime`: the next batch's size and, when this
    /// worker measured the standbys' lag before the batch, their lag now. Returns the rest to
    /// take before the worker's next batch.
    func afterBatch(_ clearance: Clearance, time batchTime: Duration, endedRange: Bool, on connection: PostgresConnection,
                    progress current: inout BackfillEngine.Progress) throws -> Duration {
        let pause = locked { $0.record(rows: clearance.batchSize, time: batchTime, endedRange: endedRange) }
        // Another worker checking now has the monitor; this batch's lag after it is then not
        // measured. Nor is it when no standby streamed before the batch: one that begins to
        // stream during it is measured before the next.
        if let monitor, let before = clearance.measuredAt, locked({ $0.takeTurnIfFree() }) {
            defer {
                locked { pace in
                    pace.giveTurnBack()
                    condition.broadcast()
                }
            }
            if monitor.sawStandbys {
                let lag = try monitor.measure(on: connection).map(\.lag).max()
                let span = monitor.measuredAt.map { $0 - before } ?? .zero
                locked { $0.measured(lagAfter: lag, span: span) }
            }
        }
        apply(to: &current)
        return pause
    }

    /// Rests for `pause`, counting it in the pace and in `progress`.
    func rest(_ pause: Duration, progress: inout BackfillEngine.Progress) {
        guard pause > .zero else { return }
        Thread.sleep(forTimeInterval: pause / .seconds(1))
        locked { pace in
            pace.rested(pause)
            pace.apply(to: &progress)
        }
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
                log("backfill paused by \(control.changedBy) at \(control.changedAt), \(BackfillRunReport.rowsConverted(progress.converted, of: progress.total)): 'phase backfill --resume' lets it go on")
            }
            Thread.sleep(forTimeInterval: 0.1)
            control = try BackfillControl.read(plan: plan, on: connection) ?? BackfillControl()
        }
        locked { [waited = clock.now - began] in $0.pauseEnded(after: waited) }
        log("backfill resumed by \(control.changedBy)")
        return control
    }

    private func locked<T>(_ body: (inout BackfillPace) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body(&pace)
    }
}
