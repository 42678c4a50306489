import CommandLineKit
import CutoverPostgres
import PostgresClient

/// `phase ledger prune`: delete the plan's ledger rows past the retention, in batches; every
/// plan's with `--all-plans`.
struct LedgerPruneCommand: PhaseCommand {
    /// `--older-than`
    static let olderThan = Option("older-than", type: .duration(in: LedgerPruner.minimumRetention ... LedgerPruner.maximumRetention),
                                  default: LedgerPruner.defaultRetention,
                                  valueName: "duration", help: "Prune ledger rows older than this; never less than a day.")
    /// `--batch-size`
    static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
                                  help: "Ledger rows deleted per transaction.")
    /// `--all-plans`
    static let allPlans = Flag("all-plans", help: "Prune every plan's ledger rows, not only the plan's (--plan).")
    static let spec = CommandSpec(
        "prune", abstract: "Delete the plan's ledger rows older than the retention, in batches.",
        discussion: "Only the plan's own rows (--plan, the built-in reference plan by default) unless --all-plans is given. "
            + "After a row is pruned its operation ID is new again: keep the retention longer than any client retries.",
        parameters: [Self.olderThan, Self.batchSize, Self.allPlans, StandardParameters.dryRun], command: Self.self)

    let context: PhaseContext
    let retention: Duration
    let batchSize: Int
    let isAllPlans: Bool
    let isDryRun: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        retention = parsed[Self.olderThan]
        batchSize = parsed[Self.batchSize]
        isAllPlans = parsed[Self.allPlans]
        isDryRun = parsed[StandardParameters.dryRun]
    }

    var invocation: String { "ledger prune" }
    var stopEffect: StopEffect { isDryRun ? .changedNothing : .finishedByRunningAgain }

    func run() async throws -> ExitCode {
        let retention = retention
        // nil: every plan's rows.
        let plan: String? = isAllPlans ? nil : try context.planSource().plan.name
        let pool = PostgresPool(configuration: context.configuration, maximumConnections: 1)
        defer { Task { await pool.shutdown() } }
        try await pool.withConnection { try ControlSchema.verify(on: $0) }
        if isDryRun {
            let seconds = Double(retention.components.seconds)
            let expired = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM cutover.operation_ledger
                     WHERE committed_at < now() - make_interval(secs => \(seconds)) AND (\(plan)::text IS NULL OR plan = \(plan))
                    """)[0].decode(Int64.self, "n")
            }
            context.console.printResult(PruneResult(plan: plan, deleted: expired, batches: 0, isComplete: false, isDryRun: true),
                                        format: context.format)
            return .done
        }
        let reporter = context.console.progress(label: "ledger prune", total: nil, isQuiet: context.isQuiet)
        let report = try await LedgerPruner(pool: pool, batchSize: batchSize).prune(olderThan: retention, plan: plan) { deleted in
            reporter.update(completed: deleted)
        }
        reporter.finish()
        context.console.printResult(PruneResult(plan: plan, deleted: Int64(report.deleted), batches: report.batches, isComplete: report.isComplete,
                                                isDryRun: false), format: context.format)
        return .done
    }
}
