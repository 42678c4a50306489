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
        /// Whether the operator asked the runner to stop (a signal); asked between units of
        /// work, so that the runner stops where it can resume.
        public var isStopRequested: @Sendable () -> Bool

        /// The defaults.
        public init(sql: SQLFileRunner.Policy = .init(), backfill: BackfillEngine.Options? = nil,
                    forceReaders: Bool = false, modernWriterWindow: Duration? = nil,
                    readerStaleAfter: Duration = ReaderRegistry.defaultStaleAfter, reason: String? = nil,
                    isStopRequested: @escaping @Sendable () -> Bool = { false }) {
            self.sql = sql
            self.backfill = backfill
            self.forceReaders = forceReaders
            self.modernWriterWindow = modernWriterWindow
            self.readerStaleAfter = readerStaleAfter
            self.reason = reason
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
    }

    /// The connection the runner works on; it holds the runner lock while a step runs.
    public let connection: PostgresConnection
    /// The plan.
    public let source: PlanSource
    let options: Options
    let log: @Sendable (String) -> Void
    /// Opens another session to the same database, for work that must not share the runner's
    /// (its checks); nil when the runner has only its own connection.
    public let openSession: (@Sendable () throws -> PostgresConnection)?

    /// A runner for `source` on `connection`; `log` receives one line per notable event
    /// (retries, resumed steps, backfill batches).
    public init(connection: PostgresConnection, source: PlanSource, options: Options = Options(),
                log: @escaping @Sendable (String) -> Void = { _ in },
                openSession: (@Sendable () throws -> PostgresConnection)? = nil) {
        self.connection = connection
        self.source = source
        self.options = options
        self.log = log
        self.openSession = openSession
    }

    /// The plan's manifest.
    public var plan: MigrationPlan { source.plan }

    // MARK: init

    /// Installs or upgrades the control schema and creates the plan's state at baseline.
    ///
    /// - Returns: what happened to the control schema, and whether the state was created.
    @discardableResult
    public func initialize() throws -> (schema: ControlSchema.InstallOutcome, createdState: Bool) {
        let schema = try ControlSchema.install(on: connection)
        let created = try MigrationState.create(plan: plan.name, on: connection)
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

    /// Runs `step` after its checks, or throws ``StepRefusal`` (nothing changed) or the error
    /// that stopped it (recorded as failed).
    ///
    /// - Parameter progress: backfill's progress, after each batch.
    @discardableResult
    public func run(_ step: PhaseStep, progress: (BackfillEngine.Progress) -> Void = { _ in }) throws -> StepReport {
        try RunnerLock.acquire(on: connection)
        defer { _ = try? RunnerLock.release(on: connection) }
        let interrupted = try PhaseHistory.markInterrupted(plan: plan.name, on: connection)
        for entry in interrupted {
            log("taking over '\(entry.step)', interrupted after it started at \(entry.startedAt) by \(entry.osUser)")
        }
        let state = try state()
        let target: MigrationPhase
        do {
            target = try PhaseMachine.transition(from: state.phase, by: step)
        } catch {
            let refusal = StepRefusal(step: step.name, failedChecks: [], reason: error.description)
            try PhaseHistory.refused(plan: plan.name, step: step.name, direction: step.direction.rawValue,
                                     reason: refusal.description, details: "{}", on: connection)
            throw refusal
        }
        let checks = try checks(before: step, state: state)
        let details = try Self.detailsJSON(checks: checks, forced: options.forceReaders && step == .switchModern,
                                           reason: options.reason)
        let failed = checks.filter { !$0.isPassed }
        guard failed.isEmpty else {
            let refusal = StepRefusal(step: step.name, failedChecks: failed, reason: nil)
            try PhaseHistory.refused(plan: plan.name, step: step.name, direction: step.direction.rawValue,
                                     reason: refusal.description, details: details, on: connection)
            throw refusal
        }
        let attempt = try PhaseHistory.begin(plan: plan.name, step: step.name, direction: step.direction.rawValue,
                                             details: details, on: connection)
        do {
            let epoch = try perform(step, to: target, attempt: attempt, progress: progress)
            return StepReport(step: step.name, from: state.phase, to: target, epoch: epoch, checks: checks,
                              resumedInterrupted: !interrupted.isEmpty)
        } catch {
            if connection.isConnected {
                try? PhaseHistory.finish(attempt, outcome: "failed", error: "\(error)", on: connection)
            }
            throw error
        }
    }

    /// Runs the one step that undoes the current phase (see ``PhaseMachine/rollbackStep(from:)``).
    @discardableResult
    public func rollback() throws -> StepReport {
        let state = try state()
        let step: PhaseStep
        do {
            step = try PhaseMachine.rollbackStep(from: state.phase)
        } catch {
            throw StepRefusal(step: "rollback", failedChecks: [], reason: error.description)
        }
        return try run(step)
    }

    /// Does the step's work; the phase changes, and the attempt is recorded done, with the last
    /// piece of work.
    private func perform(_ step: PhaseStep, to target: MigrationPhase, attempt: Int64,
                         progress: (BackfillEngine.Progress) -> Void) throws -> Int64 {
        switch step {
        case .expand, .contract:
            let files = plan.step(for: step)?.apply ?? []
            return try applyFiles(files, step: step, target: target, attempt: attempt)
        case .revertExpand:
            let files = plan.step(for: step)?.revert ?? []
            return try applyFiles(files, step: step, target: target, attempt: attempt, forgetting: .expand)
        case .switchModern, .switchLegacy:
            var epoch: Int64 = 0
            try connection.withTransaction { connection in
                epoch = try MigrationState.advance(plan: plan.name, to: target, on: connection)
                try PhaseHistory.finish(attempt, outcome: "done", epoch: epoch, on: connection)
            }
            return epoch
        case .backfill:
            // A plan without a backfill step has nothing to convert: the phase only advances.
            if let backfill = plan.step(.backfill)?.backfill {
                try runBackfill(backfill, progress: progress)
            }
            var epoch: Int64 = 0
            try connection.withTransaction { connection in
                epoch = try MigrationState.advance(plan: plan.name, to: target, on: connection)
                try PhaseHistory.finish(attempt, outcome: "done", epoch: epoch, on: connection)
            }
            return epoch
        }
    }

    private func runBackfill(_ backfill: PlanBackfill, progress: (BackfillEngine.Progress) -> Void) throws {
        var engineOptions = options.backfill ?? BackfillEngine.Options(plan: backfill)
        if options.backfill == nil { engineOptions.lockTimeout = options.sql.lockTimeout }
        let engine = BackfillEngine(plan: plan.name, batchSQL: source.text(backfill.batch.path),
                                    remainingSQL: source.text(backfill.remaining.path), options: engineOptions)
        try engine.run(on: connection, progress: progress)
    }

    /// Applies `files` in order, skipping those already applied with the same checksum, each
    /// in its own transaction with its record; the phase changes with the last one.
    private func applyFiles(_ files: [PlanSQLFile], step: PhaseStep, target: MigrationPhase, attempt: Int64,
                            forgetting forgotten: PlanStep.Kind? = nil) throws -> Int64 {
        let runner = SQLFileRunner(policy: options.sql) { [log] attempt, delay, cause in
            log("lock not available (\(cause)); retry \(attempt) in \(Int64((delay / .milliseconds(1)).rounded()))ms")
        }
        let kind = PlanStep.Kind(step)
        let applied = try appliedChecksums(step: kind)
        var epoch: Int64 = 0
        var combined: [String] = []
        let finish = { (connection: PostgresConnection) in
            if let forgotten {
                try connection.query("DELETE FROM cutover.applied_files WHERE plan = \(self.plan.name) AND step = \(forgotten.rawValue)")
            }
            epoch = try MigrationState.advance(plan: self.plan.name, to: target, on: connection)
            try PhaseHistory.finish(attempt, outcome: "done", checksum: combined.joined(separator: ","), epoch: epoch,
                                    on: connection)
        }
        for (index, file) in files.enumerated() {
            let text = source.text(file.path)
            let checksum = try self.checksum(text)
            combined.append(checksum)
            let isLast = index == files.count - 1
            // Reverting applies the revert files every time; forward files already applied
            // (by a runner that was stopped) are not applied twice.
            if forgotten == nil, applied[file.path] == checksum {
                log("\(file.path) was applied already; skipping it")
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
                try runner.runOutsideTransaction(text, table: plan.table, on: connection)
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

    // MARK: Files

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

    static func detailsJSON(checks: [CheckOutcome], forced: Bool, reason: String?) throws -> String {
        struct Details: Encodable {
            struct Check: Encodable {
                let name: String
                let ok: Bool
                let observed: String
                let expected: String
            }
            let checks: [Check]
            let forcedReaders: Bool
            let reason: String?
        }
        return try PostgresJSON(Details(checks: checks.map { .init(name: $0.name, ok: $0.isPassed, observed: $0.observed, expected: $0.expected) },
                                        forcedReaders: forced, reason: reason)).text
    }
}

/// Why the runner cannot work on a plan.
public enum PhaseRunnerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `phase init` has not created the plan's state.
    case notInitialized(String)

    public var description: String {
        switch self {
        case .notInitialized(let plan): "plan \(plan) has no migration state in this database; run 'phase init' first"
        }
    }
}
