import CommandLineKit
import CutoverPostgres
import PostgresClient

/// `phase ledger prune`: delete ledger rows past the retention, in batches.
struct LedgerPruneCommand: PhaseCommand {
    /// `--older-than`
    static let olderThan = Option("older-than", type: .duration(in: LedgerPruner.minimumRetention ... LedgerPruner.maximumRetention),
                                  default: LedgerPruner.defaultRetention,
                                  valueName: "duration", help: "Prune ledger rows older than this; never less than a day.")
    /// `--batch-size`
    static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
                                  help: "Ledger rows deleted per transaction.")
    static let spec = CommandSpec(
        "prune", abstract: "Delete ledger rows older than the retention, in batches.",
        discussion: "After a row is pruned its operation ID is new again: keep the retention longer than any client retries.",
        parameters: [Self.olderThan, Self.batchSize, StandardParameters.dryRun], command: Self.self)

    let context: PhaseContext
    let retention: Duration
    let batchSize: Int
    let isDryRun: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        retention = parsed[Self.olderThan]
        batchSize = parsed[Self.batchSize]
        isDryRun = parsed[StandardParameters.dryRun]
    }

    var invocation: String { "ledger prune" }
    var stopEffect: StopEffect { isDryRun ? .changedNothing : .finishedByRunningAgain }

    func run() async throws -> ExitCode {
        let retention = retention
        let pool = PostgresPool(configuration: context.configuration, maximumConnections: 1)
        defer { Task { await pool.shutdown() } }
        try await pool.withConnection { try ControlSchema.verify(on: $0) }
        if isDryRun {
            let seconds = Double(retention.components.seconds)
            let expired = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM cutover.operation_ledger WHERE committed_at < now() - make_interval(secs => \(seconds))
                    """)[0].decode(Int64.self, "n")
            }
            context.console.printResult(PruneResult(deleted: expired, batches: 0, isComplete: false, isDryRun: true), format: context.format)
            return .done
        }
        let reporter = context.console.progress(label: "ledger prune", total: nil, isQuiet: context.isQuiet)
        let report = try await LedgerPruner(pool: pool, batchSize: batchSize).prune(olderThan: retention) { deleted in
            reporter.update(completed: deleted)
        }
        reporter.finish()
        context.console.printResult(PruneResult(deleted: Int64(report.deleted), batches: report.batches, isComplete: report.isComplete,
                                                isDryRun: false), format: context.format)
        return .done
    }
}
