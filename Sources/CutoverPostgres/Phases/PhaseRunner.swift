import Cutover
import Foundation
import PostgresClient

/// Walks a plan through its phases on one connection, checking before every step and
/// recording every attempt.
///
/// Blocking: run it on a thread of its own. Changing steps take ``RunnerLock`` first (and fail
/// at once with ``RunnerLockError`` when another runner holds it), mark any attempt a dead
/// runner left behind as interrupted, refuse a plan whose applied SQL changed on disk, run the
/// step's checks (refusing with every failing one), and only then change anything. Each SQL
/// file runs in its own short transaction together with the record that it was applied, and the
/// change of phase commits with the step's last file, so a runner killed at any moment leaves a
/// state from which running the same step again finishes it.
public final class PhaseRunner {
    /// What the runner may do beyond the plan's defaults.
    public struct Options: Sendable {
        /// How SQL files wait for locks and retry.
        public var sql: SQLFileRunner.Policy
        /// How backfill paces itself (its batch size defaults to the plan's).
        public var backfill: BackfillEngine.Options?
        /// Switch to modern although no reader registry data shows every live reader reads v2.
        public var forceReaders: Bool
        /// The modern-writer window for contract's checks, instead of the plan's.
        public var modernWriterWindow: Duration?
        /// How long a registered reader stays live after its last heartbeat.
        public var readerStaleAfter: Duration
        /// Why the step runs, when not at an operator's hand (an automatic rollback); recorded
        /// in the history.
        public var reason: String?
        /// The longest one check may run; a check that runs longer fails, naming itself.
        public var checkTimeout: Duration
        /// Whether the operator asked the command to stop (a signal): a step stops at the next
        /// file or backfill batch, and an attempt that ends because of it is recorded interrupted.
        public var isStopRequested: @Sendable () -> Bool
        /// The standbys listed by the operator, and those contract may run beside uninspected.
        public var standbys = StandbyOptions()
        /// Sees every statement of the plan's files as it runs (a rehearsal's).
        public var statementObserver: (any StatementObserver)?
        /// Whether the runner works on a rehearsal's scratch copy: the checks of the live fleet
        /// (readers, sessions, standbys, the modern-writer window, recent legacy writes) are left
        /// out, since no application uses the copy; the plan's own checks and the data checks run.
        public var isRehearsal = false
        /// Whether expand and contract need a passing rehearsal of this very plan on this database
        /// (``RehearsalGate``); the library's default asks for none, `phase` asks for one.
        public var rehearsalGate = RehearsalGate.notRequired
        /// Whether a declarative plan pinned before its declaration was (by an earlier Cutover)
        /// goes on when only its compiled parts differ from those pinned, as the operator vouches
        /// that `plan.json` is unchanged; a changed hand-written file, or a part of `plan.json`
        /// the operator wrote, is refused all the same. Recorded in the history.
        public var acceptsRecompiledPlan = false

        /// The defaults.
        public init(sql: SQLFileRunner.Policy = .init(), backfill: BackfillEngine.Options? = nil,
                    forceReaders: Bool = false, modernWriterWindow: Duration? = nil,
                    readerStaleAfter: Duration = ReaderRegistry.defaultStaleAfter, reason: String? = nil,
                    checkTimeout: Duration = .seconds(30), isStopRequested: @escaping @Sendable () -> Bool = { false }) {
            self.sql = sql
            self.backfill = backfill
            self.forceReaders = forceReaders
            self.modernWriterWindow = modernWriterWindow
            self.readerStaleAfter = readerStaleAfter
            self.reason = reason
            self.checkTimeout = checkTimeout
            self.isStopRequested = isStopRequested
        }
    }

    /// What a step did.
    public struct StepReport: Sendable, Equatable {
        /// The step's name.
        public var step: String
        /// The phase before and after.
        public var from: MigrationPhase
        /// The phase after.
        public var to: MigrationPhase
        /// The epoch after.
        public var epoch: Int64
        /// The checks that passed before it ran.
        public var checks: [CheckOutcome]
        /// Attempts the runner found interrupted and took over.
        public var resumedInterrupted: Bool
        /// The step had happened already (asked for again after a lost reply, or by a second
        /// operator): nothing changed, and `from`, `to` and `epoch` are where the plan stands.
        public var isAlreadyDone: Bool = false
        /// The attempt that did it, when the step is already done and the history has it.
        public var doneBy: PhaseHistoryEntry?
    }

    /// The connection the runner works on; it holds the plan's lease while a step runs.
    public let connection: PostgresConnection
    /// Opens the separate sessions the runner's checks and its files outside a transaction run
    /// on; nil opens them like ``connection``.
    public let openSession: (@Sendable () throws -> PostgresConnection)?
    /// The session checks run on, opened when the first check runs.
    var checkConnection: PostgresConnection?
    /// What ``PoolerDetection`` found ``connection`` goes through, once it has looked.
    public private(set) var route: PoolerDetection.Route?
    /// The plan.
    public let source: PlanSource
    let options: Options
    let log: @Sendable (String) -> Void

    /// A runner for `source` on `connection`; `log` receives one line per notable event
    /// (retries, resumed steps, backfill batches).
    public init(connection: PostgresConnection, source: PlanSource, options: Options = Options(),
                log: @escaping @Sendable (String) -> Void = { _ in },
                openSession: (@Sendable () throws -> PostgresConnection)? = nil) {
        self.connection = connection
        self.openSession = openSession
        self.source = source
        self.options = options
        self.log = log
    }

    /// The plan's manifest.
    public var plan: MigrationPlan { source.plan }

    // MARK: init

    /// Installs or upgrades the control schema, creates the plan's state at baseline and, for
    /// a declarative plan, registers its entity for the record store (``RecordPlanRegistry``).
    ///
    /// - Returns: what happened to the control schema, and whether the state was created.
    @discardableResult
    public func initialize() throws -> (schema: ControlSchema.InstallOutcome, createdState: Bool) {
        try requireOwnSession()
        let schema = try ControlSchema.install(on: connection)
        let created = try MigrationState.create(plan: plan.name, on: connection)
        // A plan that has begun is the one it pinned: another plan of the same name (a plan
        // folder copied, or two tables of one name in two schemas) must not register its
        // table for the applications' saves.
        if !created, let state = try MigrationState.load(plan: plan.name, on: connection), state.phase != .baseline {
            let pinned = try appliedPlanUnchanged()
            guard pinned.isPassed else { throw StepRefusal(step: "init", failedChecks: [pinned], reason: nil) }
        }
        // A declarative plan declares its entity: its table, key and revision, for cutover.save_record.
        if let declaration = source.compiled?.declaration { try RecordPlanRegistry.register(declaration, on: connection) }
        return (schema, created)
    }

    /// The plan's state; throws when `init` has not run.
    public func state() throws -> MigrationState {
        try ControlSchema.verify(on: connection)
        guard let state = try MigrationState.load(plan: plan.name, on: connection) else {
            throw PhaseRunnerError.notInitialized(plan.name)
        }
        return state
    }

    // MARK: Steps

    /// Runs `step` after its checks, reports it done when it has happened already, or throws
    /// ``StepRefusal`` (nothing changed) or the error that stopped it (recorded as failed, or as
    /// interrupted when the operator stopped it).
    ///
    /// The step is bound to the transition it means: from the phase and epoch read under the
    /// plan's lease, to the step's target. The change of phase is a compare-and-set on that
    /// phase and epoch, so it cannot happen twice, and a step asked for again after it happened
    /// (its reply lost, a second operator answering the same alert) changes nothing and
    /// returns a report with ``StepReport/isAlreadyDone`` set.
    ///
    /// - Parameters:
    ///   - expectedEpoch: the epoch the operator saw; when the state has moved since, the step
    ///     is refused, unless this very step is what moved it (then it is reported done).
    ///   - progress: backfill's progress, after each batch.
    @discardableResult
    public func run(_ step: PhaseStep, expectedEpoch: Int64? = nil,
                    progress: (BackfillEngine.Progress) -> Void = { _ in }) throws -> StepReport {
        try requireOwnSession()
        try RunnerLock.acquire(plan: plan.name, on: connection)
        defer { releaseLease() }
        let interrupted = try PhaseHistory.markInterrupted(plan: plan.name, on: connection)
        for entry in interrupted {
            log("taking over '\(entry.step)', interrupted after it started at \(entry.startedAt) by \(entry.osUser)")
        }
        let state = try state()
        let decision: PhaseMachine.Decision
        do {
            decision = try self.decision(for: step, state: state, expectedEpoch: expectedEpoch)
        } catch let refusal as StepRefusal {
            try PhaseHistory.refused(plan: plan.name, step: step.name, direction: step.direction,
                                     reason: refusal.description, details: "{}", on: connection)
            throw refusal
        }
        guard case .run(let target) = decision else {
            // Done already by this plan, not by another plan of the same name or by this one
            // before it was changed.
            let pinned = try appliedPlanUnchanged()
            guard pinned.isPassed else {
                let refusal = StepRefusal(step: step.name, failedChecks: [pinned], reason: nil)
                try PhaseHistory.refused(plan: plan.name, step: step.name, direction: step.direction,
                                         reason: refusal.description, details: "{}", on: connection)
                throw refusal
            }
            try PhaseHistory.skipped(plan: plan.name, step: step.name, direction: step.direction,
                                     details: #"{"alreadyDone": true}"#, on: connection)
            return StepReport(step: step.name, from: state.phase, to: state.phase, epoch: state.epoch, checks: [],
                              resumedInterrupted: !interrupted.isEmpty, isAlreadyDone: true,
                              doneBy: try PhaseHistory.lastDone(plan: plan.name, step: step.name, on: connection))
        }
        let checks = try checks(before: step, state: state)
        let details = try Self.detailsJSON(checks: checks, forced: options.forceReaders && step == .switchModern,
                                           acceptsRecompiledPlan: options.acceptsRecompiledPlan, reason: options.reason)
        let failed = checks.filter { !$0.isPassed }
        guard failed.isEmpty else {
            let refusal = StepRefusal(step: step.name, failedChecks: failed, reason: nil)
            try PhaseHistory.refused(plan: plan.name, step: step.name, direction: step.direction,
                                     reason: refusal.description, details: details, on: connection)
            throw refusal
        }
        // A plan that goes on with SQL compiled again from its declaration says so.
        if let pinned = checks.first(where: { $0.name == Self.appliedPlanCheckName }), pinned.observed != Self.unchangedPlan {
            log("\(pinned.name): \(pinned.observed)")
        }
        let attempt = try PhaseHistory.begin(plan: plan.name, step: step.name, direction: step.direction,
                                             details: details, on: connection)
        do {
            let epoch = try perform(step, from: state, to: target, attempt: attempt, progress: progress)
            return StepReport(step: step.name, from: state.phase, to: target, epoch: epoch, checks: checks,
                              resumedInterrupted: !interrupted.isEmpty)
        } catch {
            let stopped = options.isStopRequested()
            if connection.isConnected && connection.transactionState == .idle {
                // Best effort: when this fails too, the attempt stays 'running' and the next
                // runner marks it interrupted.
                do {
                    try PhaseHistory.finish(attempt, outcome: stopped ? .interrupted : .failed,
                                            error: stopped ? "stopped by the operator: \(error)" : "\(error)", on: connection)
                } catch let recording {
                    log("could not record the attempt as ended (\(recording)); the next runner marks it interrupted")
                }
            }
            throw error
        }
    }

    /// What `step` comes to from `state`, without running or recording anything: it runs to a
    /// phase, or it is done already; or a ``StepRefusal`` saying why not.
    ///
    /// - Parameter expectedEpoch: the epoch the operator saw; when the state has moved since,
    ///   the step is refused, unless this very step is what moved it (then it is done).
    public func decision(for step: PhaseStep, state: MigrationState, expectedEpoch: Int64? = nil) throws -> PhaseMachine.Decision {
        let halfDone = try halfDoneStep(in: state.phase)
        let decision: PhaseMachine.Decision
        do {
            decision = try PhaseMachine.decide(step, from: state.phase, partlyApplied: halfDone?.step == step)
        } catch {
            throw StepRefusal(step: step.name, failedChecks: [], reason: error.description)
        }
        if let expectedEpoch, expectedEpoch != state.epoch {
            let done = try PhaseHistory.lastDone(plan: plan.name, step: step.name, on: connection)
            guard decision == .alreadyDone, let done, done.epoch == expectedEpoch + 1 else {
                throw StepRefusal(step: step.name, failedChecks: [], reason: try stateMovedReason(since: expectedEpoch, state: state))
            }
        }
        if decision != .alreadyDone, let reason = revertRefusal(step, halfDone: halfDone) {
            throw StepRefusal(step: step.name, failedChecks: [], reason: reason)
        }
        return decision
    }

    /// Undoes `kind`, the step the operator names: `switch` (back to the legacy writer),
    /// `expand` (or what a stopped expand left), or `contract` (what a contract stopped before
    /// its point of no return applied). Repeating it after it happened changes nothing.
    @discardableResult
    public func rollback(undoing kind: PlanStep.Kind, expectedEpoch: Int64? = nil) throws -> StepReport {
        try run(try Self.rollbackStep(undoing: kind), expectedEpoch: expectedEpoch)
    }

    /// The step that undoes `kind`, or the refusal for backfill, which needs no undoing.
    public static func rollbackStep(undoing kind: PlanStep.Kind) throws -> PhaseStep {
        guard let step = PhaseMachine.rollbackStep(undoing: kind) else {
            throw StepRefusal(step: "rollback \(kind)", failedChecks: [], reason:
                "backfill needs no rollback: the documents it wrote are kept and read by both readers; "
                + "to go back to the legacy writer run 'phase rollback switch'")
        }
        return step
    }

    /// Throws ``PoolerRefusal`` when ``connection`` goes through a transaction pooler: the
    /// lease, the files and their bookkeeping need one server session for the whole step.
    /// Looks once per runner.
    public func requireOwnSession() throws {
        if route == nil {
            let openSession = openSession
            let configuration = connection.configuration
            route = try PoolerDetection.route(of: connection) { try openSession?() ?? PostgresConnection(configuration: configuration) }
        }
        if case .transactionPooled(let evidence) = route { throw PoolerRefusal.transactionPooler(evidence: evidence) }
    }

    /// Gives up the plan's lease. Best effort: when the connection is broken the server has
    /// ended (or is ending) the session, which frees the lease as well.
    private func releaseLease() {
        guard connection.isConnected, connection.transactionState == .idle else { return }
        _ = try? RunnerLock.release(plan: plan.name, on: connection)
    }

    private func stateMovedReason(since expected: Int64, state: MigrationState) throws -> String {
        let last = try PhaseHistory.list(plan: plan.name, limit: 20, on: connection).last { $0.outcome == .done }
        let change = last.map { ", last changed by \($0.step) (role \($0.databaseRole), OS user \($0.osUser))" } ?? ""
        return "the state moved since epoch \(expected): it is at phase \(state.phase), epoch \(state.epoch)\(change); "
            + "look again with 'phase status', and run the command with --epoch \(state.epoch) if it is still wanted"
    }

    /// Does the step's work; the phase changes, and the attempt is recorded done, with the last
    /// piece of work, by compare-and-set on the phase and epoch the step started from.
    private func perform(_ step: PhaseStep, from state: MigrationState, to target: MigrationPhase, attempt: Int64,
                         progress: (BackfillEngine.Progress) -> Void) throws -> Int64 {
        let finish = { (connection: PostgresConnection) throws -> Int64 in
            try self.advance(from: state, to: target, attempt: attempt, on: connection)
        }
        switch step {
        case .expand, .contract:
            return try applyFiles(files(for: step), step: step, from: state, to: target, attempt: attempt)
        case .revertExpand, .revertContract:
            return try applyFiles(files(for: step), step: step, from: state, to: target, attempt: attempt,
                                  forgetting: PlanStep.Kind(step))
        case .switchModern, .switchLegacy:
            return try connection.withTransaction(finish)
        case .backfill:
            if let backfill = plan.step(.backfill)?.backfill {
                try runBackfill(backfill, attempt: attempt, progress: progress)
            }
            // The backfill is done: an operator's pause or retune of it ends with it, and so do its key ranges.
            return try connection.withTransaction { connection in
                try BackfillControl.clear(plan: self.plan.name, on: connection)
                try BackfillRanges.clear(plan: self.plan.name, on: connection)
                return try finish(connection)
            }
        }
    }

    /// The end of every step that changes the phase, inside the transaction of its last piece of
    /// work: the compare-and-set of the phase and epoch the step started from, and the attempt
    /// recorded done with the epoch it left.
    ///
    /// - Returns: the new epoch.
    private func advance(from state: MigrationState, to target: MigrationPhase, attempt: Int64, checksum: String? = nil,
                         on connection: PostgresConnection) throws -> Int64 {
        let epoch = try MigrationState.advance(plan: plan.name, from: state.phase, epoch: state.epoch, to: target, on: connection)
        try recordPins(reaching: target, on: connection)
        try PhaseHistory.finish(attempt, outcome: .done, checksum: checksum, epoch: epoch, on: connection)
        return epoch
    }

    private func runBackfill(_ backfill: PlanBackfill, attempt: Int64, progress: (BackfillEngine.Progress) -> Void) throws {
        var engineOptions = options.backfill ?? BackfillEngine.Options(plan: backfill)
        if options.backfill == nil { engineOptions.lockTimeout = options.sql.lockTimeout }
        // A table too large to count within the check timeout begins at once and is counted meanwhile.
        engineOptions.startCountTimeout = options.checkTimeout
        let engine = try BackfillEngine(source, backfill: backfill, options: engineOptions)
        try engine.run(on: connection, openSession: openSession, isStopRequested: options.isStopRequested, progress: progress,
                       log: log, attempt: attempt)
    }

    /// Applies `files` in order, skipping those already applied with the same checksum, each
    /// in its own transaction with its record; the phase changes with the last one. Reverts
    /// apply every file every time, and forget the files of the step they undo.
    private func applyFiles(_ files: [PlanSQLFile], step: PhaseStep, from state: MigrationState, to target: MigrationPhase,
                            attempt: Int64, forgetting forgotten: PlanStep.Kind? = nil) throws -> Int64 {
        let runner = SQLFileRunner(policy: options.sql, observer: options.statementObserver) { [log] attempt, delay, cause in
            log("lock not available (\(cause)); retry \(attempt) in \(Int64((delay / .milliseconds(1)).rounded()))ms")
        }
        let kind = PlanStep.Kind(step)
        let applied = try appliedChecksums(step: kind)
        let pins = pins
        var epoch: Int64 = 0
        var combined: [String] = []
        let finish = { (connection: PostgresConnection) in
            if let forgotten {
                try connection.query("DELETE FROM cutover.applied_files WHERE plan = \(self.plan.name) AND step = \(forgotten.rawValue)")
            }
            epoch = try self.advance(from: state, to: target, attempt: attempt, checksum: combined.joined(separator: ","),
                                     on: connection)
            // The plan that begins is the one the applications' saves are for, whichever plan
            // of its name `phase init` registered last.
            if state.phase == .baseline, let declaration = self.source.compiled?.declaration {
                try RecordPlanRegistry.registerUnlessCurrent(declaration, on: connection)
            }
            // The step changed the table: the plan's save function is made again for it, with the
            // change of phase, so that saves run statements written for the table's new columns.
            try RecordPlanRegistry.remakeSave(plan: self.plan.name, on: connection)
        }
        for (index, file) in files.enumerated() {
            if options.isStopRequested() { throw PhaseRunnerError.stopped(step: step.name, before: file.path) }
            let text = source.text(file.path)
            let checksum = try self.checksum(text)
            combined.append(checksum)
            let isLast = index == files.count - 1
            options.statementObserver?.fileStarts(file.path, step: step.name, isInTransaction: file.runsInTransaction)
            // A compiled file applied with other text was compiled from the same declaration by
            // another Cutover, which the check "applied SQL unchanged" accepted: it ran already.
            if forgotten == nil, let appliedChecksum = applied[file.path],
               appliedChecksum == checksum || pins.origin(of: file.path) == .compiled {
                log("\(file.path) was applied already\(appliedChecksum == checksum ? "" : " (as Cutover compiled it then)"); skipping it")
                if isLast { try connection.withTransaction { try finish($0) } }
                continue
            }
            let record = { (connection: PostgresConnection) in
                if forgotten == nil {
                    try connection.query("""
                        INSERT INTO cutover.applied_files (plan, step, file, checksum) VALUES (\(self.plan.name), \(kind.rawValue), \(file.path), \(checksum))
                        ON CONFLICT (plan, step, file) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
                        """)
                }
            }
            if file.runsInTransaction {
                try runner.runInTransaction(text, on: connection) { connection in
                    try record(connection)
                    if isLast { try finish(connection) }
                }
            } else {
                try runner.runOutsideTransaction(text, table: plan.table, on: connection, openSession: openSession)
                try connection.withTransaction { connection in
                    try record(connection)
                    if isLast { try finish(connection) }
                }
            }
            log("applied \(file.path)")
        }
        if files.isEmpty { try connection.withTransaction { try finish($0) } }
        return epoch
    }

    // MARK: Half-done steps

    /// A step whose files were partly applied by an attempt that stopped before the phase
    /// changed, and the revert that undoes them.
    public struct HalfDoneStep: Sendable, Equatable {
        /// The step that stopped half way: expand or contract.
        public var stopped: PhaseStep
        /// The revert that undoes what it applied.
        public var step: PhaseStep
        /// The files it applied, in the plan's order.
        public var appliedFiles: [String]
    }

    /// The step left half done in `phase`, if any: an expand at baseline that applied some of
    /// its files (or failed or was interrupted after it began), a contract at backfilled that
    /// applied some of its files.
    public func halfDoneStep(in phase: MigrationPhase) throws -> HalfDoneStep? {
        let stopped: PhaseStep
        switch phase {
        case .baseline: stopped = .expand
        case .backfilled: stopped = .contract
        case .expanded, .modern, .contracted: return nil
        }
        let kind = PlanStep.Kind(stopped)
        let applied = try appliedChecksums(step: kind)
        let files = (plan.step(kind)?.apply ?? []).map(\.path).filter { applied[$0] != nil }
            + applied.keys.filter { path in !(plan.step(kind)?.apply ?? []).contains { $0.path == path } }.sorted()
        var isHalfDone = !files.isEmpty
        if !isHalfDone, stopped == .expand,
           let attempt = try PhaseHistory.lastAttempt(plan: plan.name, step: stopped.name, on: connection),
           attempt.outcome == .failed || attempt.outcome == .interrupted {
            // A file outside a transaction (CREATE INDEX CONCURRENTLY) may leave an invalid
            // index without a record; the revert removes it.
            let reverted = try PhaseHistory.lastDone(plan: plan.name, step: PhaseStep.revertExpand.name, on: connection)
            isHalfDone = reverted.map { $0.id < attempt.id } ?? true
        }
        guard isHalfDone, let revert = PhaseMachine.rollbackStep(undoing: kind) else { return nil }
        return HalfDoneStep(stopped: stopped, step: revert, appliedFiles: files)
    }

    /// Why a revert the phase machine allows cannot run with this plan, if it cannot.
    private func revertRefusal(_ step: PhaseStep, halfDone: HalfDoneStep?) -> String? {
        guard step == .revertContract else { return nil }
        let contract = plan.step(.contract)
        if let last = files(for: .contract).last?.path, halfDone?.appliedFiles.contains(last) == true {
            return "contract's last file, \(last), has run: contract is past its point of no return; "
                + "finish it with 'phase contract'"
        }
        if contract?.revert.isEmpty ?? true {
            return "the plan gives contract no revert files, so a contract stopped half way can only be finished: "
                + "run 'phase contract' again once its checks pass"
        }
        return nil
    }

    // MARK: Files

    /// The SQL files `step` runs on the connected server, in order: the plan's files for it
    /// (a revert's are its step's `revert`), less those whose `serverVersion` leaves this
    /// server out; for backfill, its batch file.
    public func files(for step: PhaseStep) -> [PlanSQLFile] {
        let number = connection.serverVersion
        switch step {
        case .expand, .contract: return plan.step(for: step)?.apply(onServerVersionNumber: number) ?? []
        case .revertExpand, .revertContract: return plan.step(for: step)?.revert(onServerVersionNumber: number) ?? []
        case .backfill: return [plan.step(.backfill)?.backfill?.batch].compactMap { $0 }
        case .switchModern, .switchLegacy: return []
        }
    }

    /// The checksum of a file's text: sha256 in hex, computed by the server.
    func checksum(_ text: String) throws -> String {
        try connection.query("SELECT encode(sha256(convert_to(\(text), 'UTF8')), 'hex') AS sum")[0].decode(String.self, "sum")
    }

    /// The recorded checksums of the files applied for a step kind.
    func appliedChecksums(step kind: PlanStep.Kind) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try connection.query("""
            SELECT file, checksum FROM cutover.applied_files WHERE plan = \(plan.name) AND step = \(kind.rawValue)
            """) {
            result[try row.decode(String.self, "file")] = try row.decode(String.self, "checksum")
        }
        return result
    }

    static func detailsJSON(checks: [CheckOutcome], forced: Bool, acceptsRecompiledPlan: Bool, reason: String?) throws -> String {
        struct Details: Encodable {
            struct Check: Encodable {
                let name: String
                let ok: Bool
                let observed: String
                let expected: String
            }
            let checks: [Check]
            let forcedReaders: Bool
            let acceptedRecompiledPlan: Bool
            let reason: String?
        }
        return try PostgresJSON(Details(checks: checks.map { .init(name: $0.name, ok: $0.isPassed, observed: $0.observed, expected: $0.expected) },
                                        forcedReaders: forced, acceptedRecompiledPlan: acceptsRecompiledPlan, reason: reason)).text
    }
}

/// Why the runner cannot work on a plan, or stopped.
public enum PhaseRunnerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `phase init` has not created the plan's state.
    case notInitialized(String)
    /// The plan's state was no longer at the phase and epoch the step started from when the
    /// step came to change it; nothing changed.
    case stateMoved(plan: String, from: MigrationPhase, epoch: Int64)
    /// The operator asked the command to stop; the step stopped before `before`.
    case stopped(step: String, before: String)

    public var description: String {
        switch self {
        case .notInitialized(let plan): "plan \(plan) has no migration state in this database; run 'phase init' first"
        case .stateMoved(let plan, let phase, let epoch):
            "plan \(plan) moved from phase \(phase) at epoch \(epoch) while the step ran (another runner?); "
                + "nothing was changed by this attempt's last transaction: look with 'phase status'"
        case .stopped(let step, let before): "\(step) stopped before \(before), as asked"
        }
    }
}
