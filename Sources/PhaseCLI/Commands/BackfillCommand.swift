import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase backfill`: convert v1-only rows in keyset batches, resumably, at the plan's pace or
/// the one the command line gives.
struct BackfillCommand: PhaseCommand {
    /// `--batch-size`
    static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), valueName: "rows",
                                  help: "Rows per transaction; the plan's batch size (phase plan shows it) when omitted.")
    /// `--batch-delay`
    static let batchDelay = Option("batch-delay", type: .duration(in: .zero ... .seconds(60)), default: .zero,
                                   valueName: "duration", help: "A pause after each batch, to leave room for the live load.")
    /// `--nice-ratio`
    static let niceRatio = Option(
        "nice-ratio", type: .decimal(in: PlanLimits.niceRatio), valueName: "ratio",
        help: "A pause after each batch as a share of the batch's own time (1: as long as the batch took); the plan's nice ratio (phase plan shows it) when omitted.")
    /// `--max-replica-lag`
    static let maxReplicaLag = Option(
        "max-replica-lag", type: .duration(in: .zero ... .seconds(3600)), valueName: "duration",
        help: "Wait before a batch while a standby's replay lag is over this; the plan's ceiling (phase plan shows it) when omitted.")
    static let spec = CommandSpec(
        "backfill", abstract: "Convert the rows that only have the legacy representation.",
        discussion: "Works in keyset batches, each its own short transaction, and resumes from its stored cursor when run again.",
        parameters: [Self.batchSize, Self.niceRatio, Self.batchDelay, Self.maxReplicaLag] + StepOptions.parameters, command: Self.self)

    let context: PhaseContext
    let batchSize: Int?
    let niceRatio: Double?
    let batchDelay: Duration
    let maxReplicaLag: Duration?

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        batchSize = parsed[Self.batchSize]
        niceRatio = parsed[Self.niceRatio]
        batchDelay = parsed[Self.batchDelay]
        maxReplicaLag = parsed[Self.maxReplicaLag]
    }

    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        var options = context.runnerOptions()
        if context.steps.isDryRun { return try await context.dryRun(.backfill, options: options) }
        let plan = try context.planSource().plan
        // The plan's pace, and what the command line says instead.
        var pace = plan.step(.backfill)?.backfill.map(BackfillEngine.Options.init(plan:)) ?? BackfillEngine.Options()
        if let batchSize { pace.batchSize = batchSize }
        if let niceRatio { pace.niceRatio = niceRatio }
        pace.batchDelay = batchDelay
        if let maxReplicaLag { pace.replicaLag = ReplicaLagCeiling(maximum: maxReplicaLag) }
        pace.lockTimeout = options.sql.lockTimeout
        options.backfill = pace
        let reporter = context.console.progress(label: "backfill", total: nil, isQuiet: context.isQuiet)
        let epoch = context.steps.expectedEpoch
        let result = try await context.withReconnectingRunner(step: .backfill, options: options) { runner in
            try StepResult(runner.run(.backfill, expectedEpoch: epoch) { progress in
                reporter.update(completed: Int(progress.converted), total: Int(progress.total))
            })
        }
        reporter.finish()
        context.console.printResult(result, format: context.format)
        return .done
    }
}
