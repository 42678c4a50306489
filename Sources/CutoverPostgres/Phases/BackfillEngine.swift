import Cutover
import Foundation
import PostgresClient

/// Converts the rows that lack the new representation, in keyset batches, resumably.
///
/// The plan gives two statements: a batch (parameters: the last key of the previous batch,
/// NULL at the start, and the batch size; returns `last_key`, `converted`, `scanned`, and
/// optionally `skipped`) and a count of the rows still to convert. Each batch runs in its own
/// short transaction together with the update of the cursor in `cutover.migration_state`, so a
/// backfill killed at any moment resumes from exactly where its last durable batch ended. Rows
/// another transaction holds are skipped by the batch statement and picked up by a later pass:
/// over the keys of the batches that skipped them when the batch says so (`skipped`) and can
/// stop at the end of those keys (``isBatchBounded``), over the whole table otherwise; the
/// engine makes passes until nothing remains, up to a bound.
/// Memory does not grow with the table: one batch is in flight at a time and only its summary
/// row comes back.
public struct BackfillEngine: Sendable {
    /// How the backfill paces itself.
    public struct Options: Sendable, Equatable {
        /// Keys the first batch walks (a compiled batch converts those of their rows still to
        /// convert; a hand-written one does what its SQL does); of every batch when ``PlanBackfillThrottle/targetBatchTime``
        /// is zero.
        public var batchSize: Int
        /// A fixed pause after each batch, to leave room for the live load; with several
        /// workers, after each of a worker's own batches.
        public var batchDelay: Duration
        /// A pause after each batch in proportion to the batch's own time: 0.25 rests a quarter
        /// of the time each batch took, so the backfill takes about 1.25 times as long and leaves
        /// that share of a core (and of the WAL's flushes) to the live load, on a fast server
        /// and a slow one alike. Added to ``batchDelay``.
        ///
        /// With several ``workers``, each worker rests this share of each of its own batches'
        /// time, as one worker does: each of the backfill's sessions works at most 1/(1 + ratio)
        /// of the time, so N workers together keep at most N/(1 + ratio) sessions busy (4
        /// workers at 0.25: 3.2 sessions, where one keeps 0.8). Workers multiply the load; the
        /// ratio divides each session's share of it. The ceilings (replica lag, active sessions,
        /// the throttle query) hold the whole backfill.
        public var niceRatio: Double
        /// The longest a batch waits for a lock on the table.
        public var lockTimeout: Duration
        /// The longest a plan's direct batch (``BackfillEngine/directBatchSQL``) waits for a lock,
        /// on the table or on a row another transaction holds, before the skipping batch runs in
        /// its place: 10 ms unless set. The rows it has updated meanwhile stay locked that much
        /// longer, so it is short beside the target batch time. It is also kept under half the
        /// session's `deadlock_timeout` (1 s by default), so that a batch in a cycle of waits
        /// with the application's transaction gives up before the server looks for a deadlock
        /// and fails one of them, perhaps the application's.
        public var rowLockWait: Duration = .milliseconds(10)
        /// Passes over the table before giving up on rows that stay locked.
        public var maximumPasses: Int
        /// The standbys' replay lag a batch may start with; nil does not look at standbys.
        public var replicaLag: ReplicaLagCeiling?
        /// The time each batch should take (the batch size follows it), and when to wait
        /// before a batch: too many active sessions, or the throttle query answering true.
        public var throttle: PlanBackfillThrottle
        /// Workers converting disjoint key ranges at once in the first pass, each on a session
        /// of its own, all at one pace: one batch size, following every worker's batches; one
        /// check at a time of the operator's pause and retune, the standbys and the throttle,
        /// whose hold holds every worker; each worker resting by ``niceRatio`` after each of its
        /// batches. 1 unless told, and only for a plan that can divide its rows
        /// (``BackfillEngine/splitSQL``).
        public var workers: Int = 1
        /// The longest the count of rows still to convert may take before the first batch; past
        /// it the backfill begins without a total and counts on a session of its own meanwhile
        /// (``BackgroundRemainingCount``), so that a table too large to count quickly starts at
        /// once. Nil counts under the session's statement timeout. Parallel workers begin at once
        /// too: their key ranges come from a sample of the table, not from the count.
        public var startCountTimeout: Duration?

        /// 1,000 rows every batch, no pause, 500 ms lock timeout, 20 passes, standbys kept
        /// under 10 s of replay lag, no throttle.
        public init(batchSize: Int = 1000, batchDelay: Duration = .zero, niceRatio: Double = 0,
                    lockTimeout: Duration = .milliseconds(500), maximumPasses: Int = 20,
                    replicaLag: ReplicaLagCeiling? = ReplicaLagCeiling(),
                    throttle: PlanBackfillThrottle = PlanBackfillThrottle(targetBatchTime: .zero)) {
            precondition(niceRatio >= 0 && niceRatio.isFinite, "a nice ratio is a finite fraction, 0 or more")
            self.batchSize = batchSize
            self.batchDelay = batchDelay
            self.niceRatio = niceRatio
            self.lockTimeout = lockTimeout
            self.maximumPasses = maximumPasses
            self.replicaLag = replicaLag
            self.throttle = throttle
        }

        /// The pace a plan's backfill step sets: its batch size, nice ratio, replica lag
        /// ceiling and throttle (a batch time to meet, by default), the rest default.
        public init(plan backfill: PlanBackfill) {
            self.init(batchSize: backfill.batchSize, niceRatio: backfill.niceRatio,
                      replicaLag: ReplicaLagCeiling(maximum: backfill.maximumReplicaLag), throttle: backfill.throttle)
        }

        /// This pace with the batch size, target batch time and nice ratio an operator gave
        /// instead (nil keeps this one's). A batch size without a target batch time fixes every
        /// batch at that size; with one, it is the first batch's.
        public func overriding(batchSize: Int?, targetBatchTime: Duration?, niceRatio: Double?) -> Options {
            var pace = self
            if let batchSize {
                pace.batchSize = batchSize
                if targetBatchTime == nil { pace.throttle.targetBatchTime = .zero }
            }
            if let targetBatchTime { pace.throttle.targetBatchTime = targetBatchTime }
            if let niceRatio { pace.niceRatio = niceRatio }
            return pace
        }

        /// The pause after a batch that took `batchTime`: ``batchDelay`` plus ``niceRatio`` of it.
        public func pause(after batchTime: Duration) -> Duration {
            batchDelay + batchTime * niceRatio
        }
    }

    /// Where a backfill stands.
    public struct Progress: Sendable, Equatable {
        /// Rows converted, over every run of this backfill.
        public var converted: Int64
        /// Rows converted by earlier runs, before this one began.
        public var convertedBefore: Int64 = 0
        /// Rows converted plus rows still to convert: when this run started, and again at the
        /// end of every pass, which finds out what the application's own writes converted; nil
        /// while a count that ran past ``Options/startCountTimeout`` has not landed.
        public var total: Int64?
        /// Batches run in this run.
        public var batches: Int
        /// The pass over the table, from 1.
        public var pass: Int
        /// Time spent resting between batches in this run (``Options/batchDelay`` and
        /// ``Options/niceRatio``); with several workers, every worker's rests added up.
        public var paused: Duration = .zero
        /// Times the backfill waited for a standby to replay before a batch, in this run; a
        /// wait that held several workers counts once.
        public var replicaWaits: Int = 0
        /// Wall time the backfill waited for standbys in this run, counted once however many
        /// workers waited.
        public var replicaWaited: Duration = .zero
        /// The largest standby replay lag when the last check before a batch measured it, nil
        /// without a ceiling or a standby.
        public var replicaLagAtStart: Duration?
        /// The largest standby replay lag measured just after the last batch whose worker
        /// measured it before (with one worker, every batch; with several, the batch after
        /// each check).
        public var replicaLagAfter: Duration?
        /// The time from measuring the lag before that batch to measuring it after: the most
        /// the lag can have grown by during the batch.
        public var lastBatchSpan: Duration = .zero
        /// Rows the next batch asks for: the batch size, as the target batch time has made it;
        /// one for every worker.
        public var batchSize: Int = 0
        /// The time the last batch took, of whichever worker finished one last.
        public var lastBatchTime: Duration = .zero
        /// Times the throttle (active sessions, throttle query) held the backfill in this run;
        /// a hold of several workers counts once.
        public var throttleWaits: Int = 0
        /// Wall time the throttle held the backfill in this run, counted once however many
        /// workers it held.
        public var throttled: Duration = .zero
        /// Why the throttle last held the backfill, nil before it has.
        public var lastThrottleReason: String?
        /// What holds the backfill before its next batch now: the throttle's reason, or a
        /// standby's replay lag over the ceiling; nil while nothing does.
        public var holdReason: String?
        /// Wall time an operator's pause (`phase backfill --pause`) held the backfill in this run.
        public var pausedByOperator: Duration = .zero
        /// The nice ratio the last batch rested by, as the operator may have retuned it.
        public var niceRatio: Double = 0
        /// The target batch time the size follows now (zero: fixed).
        public var targetBatchTime: Duration = .zero
        /// Workers converting at once: more than 1 while key ranges are converted in parallel.
        public var workers: Int = 1
        /// Direct batches (a plan's batch that waits for rows others hold) whose wait ran out in
        /// this run: each was rolled back and its keys converted by the skipping batch, which
        /// the next ``DirectBatchGate/skippingAfterWait`` batches used as well.
        public var directWaitsRunOut: Int = 0

        /// Rows the application's own writes converted (or deleted) since the backfill began,
        /// as of the start of this run or the end of its last pass: never in ``converted``.
        public var convertedByApplication: Int64 = 0

        /// Rows this run converted.
        public var convertedThisRun: Int64 { converted - convertedBefore }
    }

    /// The plan whose state holds the cursor.
    public let plan: String
    /// The batch statement.
    public let batchSQL: String
    /// The statement counting the rows still to convert.
    public let remainingSQL: String
    /// The statement dividing the rows still to convert into key ranges for parallel workers
    /// (parameter: the ranges wanted; returns the `upper_key` of each but the last), nil when the
    /// plan has none. With one, the batch statement takes a third parameter: the last key of
    /// its range, NULL for none.
    public let splitSQL: String?
    /// The batch that updates its rows directly, waiting for a row another transaction holds
    /// (``PlanBackfill/directBatch``), with ``batchSQL``'s parameters and columns; nil runs
    /// ``batchSQL`` alone.
    public let directBatchSQL: String?
    /// The pacing.
    public let options: Options
    /// Whether the next batch tries ``directBatchSQL``: not for a while after one waited too long.
    let directBatches = DirectBatchGate()

    /// Whether the batch statement takes the last key of its span, `$3`: that of a plan that
    /// divides its rows does; one that does not walks from its cursor to the end of the table.
    var isBatchBounded: Bool { splitSQL != nil }

    /// An engine for `plan` with its statements.
    public init(plan: String, batchSQL: String, remainingSQL: String, splitSQL: String? = nil, directBatchSQL: String? = nil,
                options: Options = Options()) {
        self.plan = plan
        self.batchSQL = batchSQL
        self.remainingSQL = remainingSQL
        self.splitSQL = splitSQL
        self.directBatchSQL = directBatchSQL
        self.options = options
    }

    /// An engine for the backfill step of `source`'s plan, with its statements read from it.
    public init(_ source: PlanSource, backfill: PlanBackfill, options: Options) throws {
        self.init(plan: source.plan.name, batchSQL: try source.text(backfill.batch.path),
                  remainingSQL: try source.text(backfill.remaining.path),
                  splitSQL: try backfill.split.map { try source.text($0.path) },
                  directBatchSQL: try backfill.directBatch.map { try source.text($0.path) }, options: options)
    }

    /// Rows still to convert.
    public func remaining(on connection: PostgresConnection) throws -> Int64 {
        try connection.query(PostgresQuery(unsafeSQL: remainingSQL))[0].decode(Int64.self, at: 0)
    }

    /// Runs batches until no row remains.
    ///
    /// With ``Options/workers`` above 1 and a plan that can divide its rows (``splitSQL``), the
    /// first pass runs on that many workers at once, each over its own key range
    /// (`cutover.backfill_ranges`) on a session of its own, each resumable from its own
    /// cursor; ranges an earlier run left unfinished are finished first, whatever the number of
    /// workers. Later passes, for rows other transactions held, run on `connection`. Workers and
    /// passes keep one pace (see ``Options/workers`` and ``Options/niceRatio``).
    ///
    /// - Parameters:
    ///   - openSession: opens a worker's session; a new connection like `connection`'s when nil.
    ///   - isStopRequested: asked before every batch; when true the engine stops there, its
    ///     cursor saved with the last batch, and throws ``BackfillError/stopped(converted:)``.
    ///   - progress: called after every batch, on the calling thread.
    ///   - log: hears when the backfill waits for a standby (at most once per
    ///     ``ReplicaLagCeiling/noticeInterval``) and what happens to standbys it waits for,
    ///     when the throttle holds it, and when an operator paused, resumed or retuned it: once
    ///     for the whole backfill, however many workers it has.
    ///   - attempt: the history row of the step this run is part of, whose `details` get the
    ///     run's progress and pace with every batch, and when a hold begins and ends (for
    ///     `phase status` and `phase history`).
    /// - Throws: ``BackfillError/rowsStillLocked(_:)`` when rows remain after the last pass;
    ///   a worker's error once the other workers have finished their ranges.
    @discardableResult
    public func run(on connection: PostgresConnection, openSession: (@Sendable () throws -> PostgresConnection)? = nil,
                    isStopRequested: @escaping @Sendable () -> Bool = { false },
                    progress: (Progress) -> Void = { _ in }, log: @escaping @Sendable (String) -> Void = { _ in },
                    attempt: Int64? = nil) throws -> Progress {
        guard var state = try MigrationState.load(plan: plan, on: connection) else { throw BackfillError.noState(plan) }
        if directBatchSQL != nil { try directBatches.readDeadlockTimeout(on: connection) }
        var current = Progress(converted: state.backfillConverted, total: nil, batches: 0, pass: 1)
        current.convertedBefore = current.converted
        let open = openSession ?? { [configuration = connection.configuration] in try PostgresConnection(configuration: configuration) }
        let countTimeout = options.startCountTimeout
        var background: BackgroundRemainingCount?
        defer { background?.cancel() }
        let left = try startingCount(on: connection, timeout: countTimeout, isStopRequested: isStopRequested)
        if let left {
            try count(converted: current.converted, remaining: left, into: &current, state: &state, on: connection)
        } else if let countTimeout {
            log("backfill: the rows still to convert were not counted within \(DurationText.format(countTimeout)) "
                + "(the count reads the table); converting meanwhile, and counting on a session of its own")
            background = BackgroundRemainingCount(plan: plan, remainingSQL: remainingSQL, openSession: open)
        }
        let clock = ContinuousClock()
        let began = clock.now
        // The first pass walks the table from the cursor; a later one, the keys of the batches
        // of the pass before it that skipped rows.
        var spans = [KeySpan(after: state.backfillCursor, upper: nil)]
        // The keys an earlier run walked: the one pass that may not end uncounted walks them again.
        var uncovered = state.backfillCursor.map { [KeySpan(after: nil, upper: $0)] } ?? []
        // One pace for the whole backfill: its workers, and the passes after them.
        let pacer = BackfillPacer(plan: plan, options: options, log: log)
        pacer.excludeSession(of: background)
        if let splitSQL {
            let earlier = try BackfillRanges.all(plan: plan, on: connection)
            let ranges = try BackfillRanges(plan: plan, splitSQL: splitSQL)
                .prepare(workers: options.workers, remaining: left, on: connection, log: log)
            if !ranges.isEmpty {
                uncovered = earlier.compactMap(\.walkedBefore)
                var skipped = SkippedRows()
                current = try runWorkers(over: ranges, from: current, pacer: pacer, began: began, on: connection, openSession: open,
                                         isStopRequested: isStopRequested, progress: progress, log: log, attempt: attempt,
                                         skipped: &skipped) { current in
                    // The calling thread takes the background count in while the workers convert.
                    guard let counting = background, let outcome = counting.outcome else { return }
                    background = nil
                    try landed(outcome, into: &current, state: &state, on: connection, log: log)
                }
                guard let next = try afterPass(skipping: skipped, uncovered: &uncovered, background: &background, current: &current,
                                               state: &state, on: connection, isStopRequested: isStopRequested, log: log) else {
                    progress(current)
                    return current
                }
                spans = next
                current.pass += 1
                waitBeforeRetrying(pass: current.pass, isStopRequested: isStopRequested)
            }
        }
        var span = 0
        var cursor = spans[0].after
        var skipped = SkippedRows()
        pacer.apply(to: &current)
        progress(current)
        while true {
            if isStopRequested() { throw BackfillError.stopped(converted: current.converted) }
            // A hold's beginning and end are written at once, for 'phase status'; a batch writes the rest.
            let clearance = try pacer.beforeBatch(on: connection, progress: &current, isStopRequested: isStopRequested) { held in
                if let attempt {
                    try write(Report(attempt: attempt, progress: held, elapsed: clock.now - began), converted: 0,
                              batchSize: Int64(held.batchSize), recordsBatch: false, on: connection)
                }
            }
            let batchBegan = clock.now
            var reported = current
            reported.batches += 1
            let report = attempt.map { Report(attempt: $0, progress: reported, elapsed: clock.now - began) }
            let batch = try runBatch(after: cursor, size: clearance.batchSize, in: .whole(upper: spans[span].upper), report: report,
                                     on: connection)
            let pause = try pacer.afterBatch(clearance, time: clock.now - batchBegan, endedRange: batch.lastKey == nil,
                                             on: connection, progress: &current)
            current.batches += 1
            current.converted += batch.converted
            current.directWaitsRunOut = directBatches.waitsRunOut
            skipped.note(batch.skipped, after: cursor, through: batch.lastKey ?? spans[span].upper)
            cursor = batch.lastKey
            if cursor == nil, span + 1 < spans.count {
                // The next span of keys this pass walks again.
                span += 1
                cursor = spans[span].after
                progress(current)
            } else if cursor == nil {
                // The end of a pass.
                guard let next = try afterPass(skipping: skipped, uncovered: &uncovered, background: &background, current: &current,
                                               state: &state, on: connection, isStopRequested: isStopRequested, log: log) else {
                    progress(current)
                    return current
                }
                progress(current)
                (spans, span, skipped) = (next, 0, SkippedRows())
                cursor = spans[0].after
                current.pass += 1
                waitBeforeRetrying(pass: current.pass, isStopRequested: isStopRequested)
                continue
            } else {
                if let counting = background, let outcome = counting.outcome {
                    background = nil
                    try landed(outcome, into: &current, state: &state, on: connection, log: log)
                }
                progress(current)
            }
            pacer.rest(pause, progress: &current)
        }
    }

    /// The rows still to convert before the first batch, nil when the count ran past `timeout`
    /// (nil: the session's statement timeout only).
    func startingCount(on connection: PostgresConnection, timeout: Duration?,
                       isStopRequested: () -> Bool) throws -> Int64? {
        do {
            return try remainingOnOneCore(on: connection, timeout: timeout)
        } catch let error as PostgresError where error.sqlState == .queryCanceled && !isStopRequested() && timeout != nil {
            return nil
        }
    }

    /// The rows still to convert at the end of pass `pass`, under the session's statement timeout.
    func passEndCount(on connection: PostgresConnection, pass: Int, isStopRequested: () -> Bool) throws -> Int64 {
        do {
            return try remainingOnOneCore(on: connection, timeout: nil)
        } catch let error as PostgresError where error.sqlState == .queryCanceled && !isStopRequested() {
            throw BackfillError.countTimedOut(pass: pass)
        }
    }

    /// The setting that keeps the backfill's own counts of the rows still to convert on one
    /// process. The count reads the whole table; with the server's parallel workers (two by
    /// default for a table of any size) it would take three processes at once, every core of
    /// a small server, away from the live load and from the backfill's own batches. The
    /// counts of `phase status` and of contract's check, which an operator waits for, keep
    /// them.
    static let countOnOneCore = "SET LOCAL max_parallel_workers_per_gather = 0"

    /// ``remaining(on:)`` in a transaction of its own, on one process (``countOnOneCore``),
    /// under `timeout` (nil: the session's statement timeout).
    private func remainingOnOneCore(on connection: PostgresConnection, timeout: Duration?) throws -> Int64 {
        var settings = Self.countOnOneCore
        if let timeout {
            settings += "; SET LOCAL statement_timeout = '\(Int64((timeout / .milliseconds(1)).rounded(.up)))ms'"
        }
        return try connection.withTransaction(settings: settings) { try remaining(on: $0) }
    }

    /// Takes a count of `remaining` rows still to convert, `converted` rows converted, into the
    /// progress, and records what there was to convert when the backfill began if no earlier
    /// count has: the application's own conversions are told apart from it later.
    func count(converted: Int64, remaining: Int64, into current: inout Progress, state: inout MigrationState,
               on connection: PostgresConnection) throws {
        if state.backfillInitialRemaining == nil {
            state.backfillInitialRemaining = converted + remaining
            try connection.query("""
                UPDATE cutover.migration_state SET backfill_initial_remaining = \(converted + remaining)
                 WHERE plan = \(plan) AND backfill_initial_remaining IS NULL
                """)
        }
        var counted = state
        counted.backfillConverted = converted
        current.total = converted + remaining
        current.convertedByApplication = counted.convertedByApplication(remaining: remaining)
    }

    /// Takes the background count's outcome into the progress; a count that failed leaves the
    /// backfill going on without a total until its pass ends, and says so.
    private func landed(_ outcome: Result<BackgroundRemainingCount.Counted, any Error>, into current: inout Progress,
                        state: inout MigrationState, on connection: PostgresConnection,
                        log: (String) -> Void) throws {
        switch outcome {
        case .success(let counted):
            try count(converted: counted.converted, remaining: counted.remaining, into: &current, state: &state, on: connection)
            log("backfill: \(counted.remaining) rows were still to convert when counted "
                + "(the count took \(DurationText.format(counted.took, smallestUnit: .seconds)))")
        case .failure(let error):
            log("backfill: the count of rows still to convert failed (\(error)); converting on without a total until the pass ends")
        }
    }

    /// Where a batch's cursor is kept: the plan's migration state, for the table as one walk
    /// (a later pass's span of it ends at `upper`), or one of its key ranges, which ends at
    /// `upper`; nil: the end of the table.
    enum Span {
        case whole(upper: String?)
        case range(number: Int, upper: String?)

        var upper: String? {
            switch self {
            case .whole(let upper), .range(_, let upper): upper
            }
        }
    }

    /// Runs one batch after `cursor` in its own transaction, with the cursor and the rows
    /// converted, and the run's report when given. `skipped` is nil for a batch that does not
    /// say how many rows other transactions held.
    ///
    /// With a plan's direct batch (``directBatchSQL``), the batch is that one first, under a lock
    /// timeout of ``Options/rowLockWait``: it locks each row as it updates it and waits for one
    /// another transaction holds. When the wait runs out, its transaction is rolled back and the
    /// skipping batch (``batchSQL``) converts the same keys instead, and the next
    /// ``DirectBatchGate/skippingAfterWait`` batches skip from the start.
    func runBatch(after cursor: String?, size: Int, in span: Span, report: Report?,
                  on connection: PostgresConnection) throws -> (lastKey: String?, converted: Int64, skipped: Int64?) {
        if let directBatchSQL, directBatches.isNextDirect() {
            do {
                return try runBatch(directBatchSQL, lockTimeout: directBatches.wait(atMost: options.rowLockWait), after: cursor,
                                    size: size, in: span, report: report, on: connection)
            } catch let error as PostgresError where error.sqlState == .lockNotAvailable && connection.transactionState == .idle {
                directBatches.waitRanOut()
            }
        }
        return try runBatch(batchSQL, lockTimeout: options.lockTimeout, after: cursor, size: size, in: span, report: report,
                            on: connection)
    }

    private func runBatch(_ sql: String, lockTimeout: Duration, after cursor: String?, size: Int, in span: Span, report: Report?,
                          on connection: PostgresConnection) throws -> (lastKey: String?, converted: Int64, skipped: Int64?) {
        let size = Int32(clamping: size)
        let timeout = max(1, Int64((lockTimeout / .milliseconds(1)).rounded(.up)))
        var binds = [cursor.postgresBind, size.postgresBind]
        if isBatchBounded { binds.append(span.upper.postgresBind) }
        // A plan for each batch's own cursor: the batch statement is prepared, and a generic
        // plan, blind to the cursor, reads the whole table for every batch.
        // Asynchronous commit: a batch and its cursor commit or vanish together, so a batch
        // that a crash loses before its WAL reached disk is simply converted again on resume,
        // and the next durable commit (the runner's record of the step, any save) flushes
        // the WAL of every batch before it. Not waiting for each batch's flush is part of
        // what lets a backfill keep up with one set-based UPDATE.
        // No JIT compilation: the planner cannot see the batch's bounds (they come from the
        // batch's own subqueries), so it estimates a share of the whole table, and on a large
        // table whose key order the conversion has scattered (each converted row moves) the
        // cost of that estimate passes `jit_above_cost`. Every batch, planned afresh, compiled
        // its expressions again, 10 to 35 ms of CPU in a batch meant to take 50, to which the batch sizer
        // answered with smaller batches, each paying it again: a backfill of 10,000,000 rows
        // ran at a third of its pace. A batch touches a few thousand rows; compiling never pays.
        let settings = """
            SET LOCAL lock_timeout = '\(timeout)ms'; SET LOCAL plan_cache_mode = force_custom_plan;
            SET LOCAL synchronous_commit = off; SET LOCAL jit = off
            """
        return try connection.withTransaction(settings: settings) { connection in
            let rows = try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds))
            let row = rows[0]
            let lastKey = try row.decode(String?.self, "last_key")
            let converted = try row.decode(Int64.self, "converted")
            let skipped = rows.columns.contains { $0.name == "skipped" } ? try row.decode(Int64.self, "skipped") : nil
            switch span {
            case .whole:
                try connection.query("""
                    UPDATE cutover.migration_state
                       SET backfill_cursor = \(lastKey), backfill_converted = backfill_converted + \(converted), updated_at = now()
                     WHERE plan = \(plan)
                    """)
            case .range(let number, _):
                try BackfillRanges.record(plan: plan, range: number, lastKey: lastKey, converted: converted, on: connection)
            }
            if let report { try write(report, converted: converted, batchSize: Int64(size), recordsBatch: true, on: connection) }
            return (lastKey, converted, skipped)
        }
    }
}

/// A backfill that could not finish.
public enum BackfillError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Rows remained after the last pass: other transactions held them every time.
    case rowsStillLocked(Int64)
    /// The plan has no state row: `phase init` has not run.
    case noState(String)
    /// Stopped between batches as asked, with this many rows converted in all; running
    /// backfill again resumes from the saved cursor.
    case stopped(converted: Int64)
    /// The throttle query failed the first time it ran: a mistake in it, which its text shows.
    case throttleQueryFailed(String)
    /// The count of rows still to convert that ends a pass ran past the statement timeout.
    case countTimedOut(pass: Int)

    public var description: String {
        switch self {
        case .rowsStillLocked(let count):
            "backfill stopped with \(count) rows still to convert: other transactions held them on every pass; run backfill again"
        case .noState(let plan): "plan \(plan) has no migration state; run 'phase init' first"
        case .stopped(let converted):
            "backfill stopped between batches as asked, \(converted) rows converted so far; run backfill again to resume"
        case .throttleQueryFailed(let error):
            "the throttle query failed before the first batch: \(error); correct it (--throttle-query, or the plan's throttleQuery) and run backfill again"
        case .countTimedOut(let pass):
            "the count of rows still to convert that ends pass \(pass) ran past the statement timeout: it reads the whole table; "
                + "run backfill again with a --statement-timeout as long as a SELECT count(*) of the table takes"
        }
    }
}
