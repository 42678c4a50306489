import Cutover

/// The pace one backfill's workers share, without a server: whose turn it is to check before a
/// batch (an operator's control, the standbys, the throttle), how long an answer that lets
/// batches run stands, one batch size for every worker, the rest after a batch, and the pace's
/// figures, each hold counted once for the whole.
///
/// One worker at a time has the turn. An answer that lets batches run stands for as many
/// batches as there are workers (the checker's own among them), and for no longer than the last
/// batch and its rest took, so that the backfill checks about as often as one worker alone would,
/// and no batch starts on an answer older than one worker's batch and rest. With one worker every
/// batch is checked before it runs. ``BackfillPacer`` keeps one behind a lock and runs the checks.
struct BackfillPace: Sendable {
    /// What a worker about to run a batch is to do.
    enum Turn: Sendable, Equatable {
        /// Run the batch: a recent check lets it.
        case go
        /// Check for every worker, then say so with ``checked(at:)`` (or ``checkFailed()``).
        case check
        /// Another worker is checking: wait for its answer, then ask again.
        case wait
    }

    /// The batch size every worker asks for.
    private(set) var sizer: BatchSizer
    /// The rest after each batch (``BackfillEngine/Options/pause(after:)``), its nice ratio as an
    /// operator may have retuned it.
    private(set) var rest: BackfillEngine.Options
    /// Workers converting at once.
    private(set) var workers = 1

    private var isChecking = false
    /// When the last check let batches run, and how many more batches it lets.
    private var clearance: (at: ContinuousClock.Instant, batches: Int)?
    /// The last batch's time and rest: how long one worker takes from one check to its next.
    private var cycle: Duration?

    /// The time the last batch took, of whichever worker finished one last.
    private(set) var lastBatchTime: Duration = .zero
    /// Times the throttle held the backfill, each counted once.
    private(set) var throttleWaits = 0
    /// Wall time the throttle held the backfill.
    private(set) var throttled: Duration = .zero
    /// Why the throttle last held the backfill.
    private(set) var lastThrottleReason: String?
    /// Times the backfill waited for standbys, each counted once.
    private(set) var replicaWaits = 0
    /// Wall time the backfill waited for standbys.
    private(set) var replicaWaited: Duration = .zero
    /// The largest replay lag when the last check measured it.
    private(set) var replicaLagAtStart: Duration?
    /// The largest replay lag measured after the last batch whose worker measured it before.
    private(set) var replicaLagAfter: Duration?
    /// The time from that batch's measurement before it to the one after it.
    private(set) var lastBatchSpan: Duration = .zero
    /// Wall time an operator's pause held the backfill.
    private(set) var pausedByOperator: Duration = .zero
    /// Time the workers rested between batches, summed over them.
    private(set) var rested: Duration = .zero
    /// What holds the backfill now: the throttle's reason, or a standby over the ceiling.
    private(set) var holdReason: String?

    /// The pace `options` start with.
    init(_ options: BackfillEngine.Options) {
        sizer = BatchSizer(initial: options.batchSize, target: options.throttle.targetBatchTime)
        rest = options
    }

    /// Shares the pace among `workers` from now on: the batches an answer stands for, and the
    /// batches the size follows.
    mutating func share(among workers: Int) {
        self.workers = max(1, workers)
        sizer.window = self.workers
        clearance = nil
    }

    /// What a worker about to run a batch at `now` is to do; a ``Turn/check`` is the worker's
    /// until it says it checked or gives the turn back.
    mutating func turn(at now: ContinuousClock.Instant) -> Turn {
        if isChecking { return .wait }
        if let cleared = clearance, cleared.batches > 0, cycle.map({ now - cleared.at < $0 }) ?? true {
            clearance?.batches -= 1
            return .go
        }
        isChecking = true
        return .check
    }

    /// The worker with the turn checked and the batches may run: its own and up to one per other
    /// worker after it.
    mutating func checked(at now: ContinuousClock.Instant) {
        isChecking = false
        clearance = (now, workers - 1)
    }

    /// Takes the turn for a measurement outside a check, when nobody has it; false when someone does.
    mutating func takeTurnIfFree() -> Bool {
        guard !isChecking else { return false }
        isChecking = true
        return true
    }

    /// Gives back the turn taken for a measurement.
    mutating func giveTurnBack() {
        isChecking = false
    }

    /// The check failed or was stopped: the turn is free again, and whatever held the backfill
    /// no longer does.
    mutating func checkFailed() {
        isChecking = false
        holdReason = nil
    }

    /// An operator's retune, from the next batch.
    mutating func retune(niceRatio: Double, targetBatchTime: Duration) {
        rest.niceRatio = niceRatio
        sizer.retarget(targetBatchTime)
    }

    /// Something holds the backfill from now: `reason` says what.
    mutating func holds(_ reason: String) {
        holdReason = reason
    }

    /// The throttle let the backfill go after holding it `waited` for `reason`.
    mutating func throttleLetGo(reason: String, after waited: Duration) {
        throttleWaits += 1
        throttled += waited
        lastThrottleReason = reason
        holdReason = nil
    }

    /// The standbys came under the ceiling after the backfill waited `waited` for them.
    mutating func standbysCaughtUp(after waited: Duration) {
        replicaWaits += 1
        replicaWaited += waited
        holdReason = nil
    }

    /// A check measured the standbys' largest replay lag: `lag`, nil without a standby.
    mutating func measured(lagAtStart lag: Duration?) {
        replicaLagAtStart = lag
    }

    /// The worker of a batch whose check measured the lag before it measured it again after it,
    /// `span` after the first.
    mutating func measured(lagAfter lag: Duration?, span: Duration) {
        replicaLagAfter = lag
        lastBatchSpan = span
    }

    /// An operator's pause held the backfill for `waited`.
    mutating func pauseEnded(after waited: Duration) {
        pausedByOperator += waited
    }

    /// Takes account of a batch that asked for `rows` rows and took `time` (`endedRange` when it
    /// was the last of its range or pass), and returns the rest its worker takes before its next.
    mutating func record(rows: Int, time: Duration, endedRange: Bool) -> Duration {
        sizer.record(rows: rows, time: time, endedPass: endedRange)
        lastBatchTime = time
        let pause = rest.pause(after: time)
        cycle = time + pause
        return pause
    }

    /// A worker rested `pause`.
    mutating func rested(_ pause: Duration) {
        rested += pause
    }

    /// Sets `progress`'s pace fields to this pace's.
    func apply(to progress: inout BackfillEngine.Progress) {
        progress.batchSize = sizer.size
        progress.targetBatchTime = sizer.target
        progress.niceRatio = rest.niceRatio
        progress.lastBatchTime = lastBatchTime
        progress.throttleWaits = throttleWaits
        progress.throttled = throttled
        progress.lastThrottleReason = lastThrottleReason
        progress.replicaWaits = replicaWaits
        progress.replicaWaited = replicaWaited
        progress.replicaLagAtStart = replicaLagAtStart
        progress.replicaLagAfter = replicaLagAfter
        progress.lastBatchSpan = lastBatchSpan
        progress.pausedByOperator = pausedByOperator
        progress.paused = rested
        progress.holdReason = holdReason
    }
}
