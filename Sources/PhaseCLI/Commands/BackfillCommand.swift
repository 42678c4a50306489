import CommandLineKit
import Cutover
import CutoverPostgres
import Synchronization

/// `phase backfill`: convert v1-only rows in keyset batches, resumably, at the plan's pace or
/// the one the command line gives.
struct BackfillCommand: PhaseCommand {
    /// `--batch-size`
    static let batchSize = Option(
        "batch-size", type: .integer(in: 1...100_000), valueName: "keys",
        help: "Keys the first batch walks (in key order, converting those of their rows still to convert); the plan's batch size (phase plan shows it) when omitted. Given without --target-batch-time, every batch is this size.")
    /// `--target-batch-time`
    static let targetBatchTime = Option(
        "target-batch-time", type: .duration(in: .zero ... PlanLimits.maximumTargetBatchTime), valueName: "duration",
        help: "The time each batch should take: the batch size grows and shrinks to meet it; 0s keeps it fixed. The plan's (50ms unless it says otherwise) when omitted.")
    /// `--max-active-sessions`
    static let maxActiveSessions = Option(
        "max-active-sessions", type: .integer(in: PlanLimits.activeSessions), valueName: "n",
        help: "Wait before a batch while more than this many sessions of the server run a statement (pg_stat_activity; this role needs pg_monitor to see them all); the plan's maxActiveSessions when omitted, else no ceiling.")
    /// `--throttle-query`
    static let throttleQuery = Option(
        "throttle-query", type: .string, valueName: "sql",
        help: "A query run read-only before each batch: while its first column is true or a number above 0, wait. One that fails before the first batch stops the backfill. The plan's throttleQuery when omitted.")
    /// `--batch-delay`
    static let batchDelay = Option("batch-delay", type: .duration(in: .zero ... .seconds(60)), default: .zero,
                                   valueName: "duration", help: "A pause after each batch (with --workers, each worker's own), to leave room for the live load.")
    /// `--nice-ratio`
    static let niceRatio = Option(
        "nice-ratio", type: .decimal(in: PlanLimits.niceRatio), valueName: "ratio",
        help: "A pause after each batch as a share of the batch's own time (1: as long as the batch took); the plan's nice ratio (phase plan shows it) when omitted. With --workers n, each worker rests so after each of its own batches: each session works at most 1/(1 + ratio) of the time, and the n together keep at most n/(1 + ratio) sessions busy.")
    /// `--max-replica-lag`
    static let maxReplicaLag = Option(
        "max-replica-lag", type: .duration(in: .zero ... .seconds(3600)), valueName: "duration",
        help: "Wait before a batch while a standby's replay lag is over this; the plan's ceiling (phase plan shows it) when omitted.")
    /// `--workers`
    static let workers = Option(
        "workers", type: .integer(in: 1...64), default: 1, valueName: "n",
        help: "Convert with this many workers at once, each over its own key range on a session of its own and each resumable, all at one pace: one batch size, following every worker's batches; one worker at a time checks the pause, the standbys and the throttle for all, and while one holds, every worker waits; each rests by --nice-ratio after its own batches. Ranges an earlier run left unfinished are finished first, whatever n. A declarative plan's backfill only.")
    /// `--pause`
    static let pause = Flag("pause", help: "Pause the plan's backfill before its next batch, from any terminal (or the next backfill before its first); the running backfill keeps its lock and says it waits.")
    /// `--resume`
    static let resume = Flag("resume", help: "Let a paused backfill go on.")
    /// `--retune`
    static let retune = Flag(
        "retune",
        help: "Give the running backfill (or the next) the --target-batch-time, --nice-ratio, --max-active-sessions and --max-replica-lag given with it, from its next batch until it finishes.")
    static let spec = CommandSpec(
        "backfill", abstract: "Convert the rows that only have the legacy representation.",
        discussion: "Works in keyset batches, each its own short transaction, and resumes from its stored cursor when run again. "
            + "Rows another transaction holds are skipped, not waited on; a later pass walks again the keys of the batches that "
            + "skipped any (the whole table, for a plan of SQL files whose batch takes no last key), up to 20 passes. It counts the rows still to convert when it begins and when a pass skipped none, "
            + "each time under --check-timeout: a first count past it goes on in the background while batches run, and a last "
            + "one past it is left to contract's own check (a plan of SQL files counts at every pass end, under --statement-timeout). "
            + "--pause, --resume and --retune change a backfill running in another terminal and return at once.",
        parameters: [Self.pause, Self.resume, Self.retune, Self.batchSize, Self.targetBatchTime, Self.niceRatio, Self.batchDelay, Self.maxReplicaLag,
                     Self.maxActiveSessions, Self.throttleQuery, Self.workers] + StepOptions.parameters, command: Self.self)

    let context: PhaseContext
    let batchSize: Int?
    let niceRatio: Double?
    let batchDelay: Duration
    let maxReplicaLag: Duration?
    let targetBatchTime: Duration?
    let maxActiveSessions: Int?
    let throttleQuery: String?
    let workers: Int
    let isPause: Bool
    let isResume: Bool
    let isRetune: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        batchSize = parsed[Self.batchSize]
        niceRatio = parsed[Self.niceRatio]
        batchDelay = parsed[Self.batchDelay]
        maxReplicaLag = parsed[Self.maxReplicaLag]
        targetBatchTime = parsed[Self.targetBatchTime]
        maxActiveSessions = parsed[Self.maxActiveSessions]
        throttleQuery = parsed[Self.throttleQuery]
        workers = parsed[Self.workers]
        isPause = parsed[Self.pause]
        isResume = parsed[Self.resume]
        isRetune = parsed[Self.retune]
    }

    /// Where the backfill stands, for the line a stop prints.
    private final class Latest: Sendable {
        let progress = Mutex<BackfillEngine.Progress?>(nil)
    }
    private let latest = Latest()

    var stopEffect: StopEffect {
        guard context.steps.stopEffect != .changedNothing, let progress = latest.progress.withLock({ $0 }) else {
            return context.steps.stopEffect
        }
        return .backfillResumable(converted: progress.converted, total: progress.total)
    }

    func run() async throws -> ExitCode {
        if isPause || isResume || isRetune { return try await control() }
        var options = context.runnerOptions()
        if context.steps.isDryRun { return try await context.dryRun(.backfill, options: options) }
        let plan = try context.planSource().plan
        if workers > 1, let backfill = plan.step(.backfill)?.backfill, backfill.split == nil {
            throw CommandFailure("--workers needs a plan whose backfill divides its rows into key ranges; this plan's batch (\(backfill.batch.path)) is hand-written and takes none, so it runs on one worker",
                                 exitCode: .usage)
        }
        // The plan's pace, and what the command line says instead.
        var pace = (plan.step(.backfill)?.backfill.map(BackfillEngine.Options.init(plan:)) ?? BackfillEngine.Options())
            .overriding(batchSize: batchSize, targetBatchTime: targetBatchTime, niceRatio: niceRatio)
        if let maxActiveSessions { pace.throttle.maximumActiveSessions = maxActiveSessions }
        if let throttleQuery { pace.throttle.throttleQuery = throttleQuery }
        pace.batchDelay = batchDelay
        if let maxReplicaLag { pace.replicaLag = ReplicaLagCeiling(maximum: maxReplicaLag) }
        pace.lockTimeout = options.sql.lockTimeout
        pace.workers = workers
        options.backfill = pace
        let reporter = context.console.progress(label: "backfill", total: nil, isQuiet: context.isQuiet)
        let epoch = context.steps.expectedEpoch
        let result = try await context.withReconnectingRunner(step: .backfill, options: options) { runner in
            try StepResult(runner.run(.backfill, expectedEpoch: epoch) { progress in
                latest.progress.withLock { $0 = progress }
                if progress.batches == 0 { reporter.resume(from: Int(progress.convertedBefore)) }
                reporter.update(completed: Int(progress.converted), total: progress.total.map { Int($0) })
            })
        }
        reporter.finish()
        if let byApplication = latest.progress.withLock({ $0?.convertedByApplication }), byApplication > 0, !context.isQuiet {
            context.console.printDiagnostic("backfill: \(byApplication) more rows converted by the application's own writes since the backfill began")
        }
        context.console.printResult(result, format: context.format)
        return .done
    }

    /// `--pause`, `--resume` or `--retune`: writes the plan's backfill control; takes no runner lock.
    private func control() async throws -> ExitCode {
        guard [isPause, isResume, isRetune].filter({ $0 }).count == 1 else {
            throw CommandFailure("give one of --pause, --resume and --retune", exitCode: .usage)
        }
        let retuned = targetBatchTime != nil || niceRatio != nil || maxActiveSessions != nil || maxReplicaLag != nil
        if isRetune && !retuned {
            throw CommandFailure("--retune needs at least one of --target-batch-time, --nice-ratio, --max-active-sessions and --max-replica-lag",
                                 exitCode: .usage)
        }
        if workers != 1 { throw CommandFailure("--workers is a backfill's own: give it when starting one", exitCode: .usage) }
        if !isRetune && (retuned || batchSize != nil || throttleQuery != nil || batchDelay != .zero) {
            throw CommandFailure("--pause and --resume take no pace: give it with --retune", exitCode: .usage)
        }
        let (isPause, isResume) = (isPause, isResume)
        let (target, ratio, sessions, lag) = (targetBatchTime, niceRatio, maxActiveSessions, maxReplicaLag)
        let result = try await context.withRunner(options: context.runnerOptions(), isReadOnly: false) { runner in
            try ControlSchema.verify(on: runner.connection)
            let plan = runner.plan.name
            let osUser = PhaseHistory.osUser
            let control = if isPause {
                try BackfillControl.pause(plan: plan, osUser: osUser, on: runner.connection)
            } else if isResume {
                try BackfillControl.resume(plan: plan, osUser: osUser, on: runner.connection)
            } else {
                try BackfillControl.retune(plan: plan, targetBatchTime: target, niceRatio: ratio, maximumActiveSessions: sessions,
                                           maximumReplicaLag: lag, osUser: osUser, on: runner.connection)
            }
            let holder = try RunnerLock.holder(plan: plan, on: runner.connection)
            return BackfillControlResult(action: isPause ? .pause : isResume ? .resume : .retune, plan: plan, control: control,
                                         runner: holder.map(\.description))
        }
        context.console.printResult(result, format: context.format)
        return .done
    }
}
