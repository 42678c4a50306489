import Cutover
import CutoverPostgres
import Foundation
import PostgresClient

extension PhaseCommand {
    func status() async throws -> ExitCode {
        let result = try await withRunner { runner in
            let status = try runner.status()
            return StatusResult(status, standbys: try runner.standbyOverview(before: status.nextStep))
        }
        console.printResult(result, format: format)
        return .done
    }

    func check() async throws -> ExitCode {
        let chosen = parsed[PhaseCommandTree.step]
        let result = try await withRunner { runner -> ChecksResult in
            let state = try runner.state()
            let step: PhaseStep
            switch chosen {
            case nil:
                guard let next = PhaseMachine.nextStep(from: state.phase) else {
                    return ChecksResult(step: "none", phase: state.phase, checks: [], refusal: "the plan is contracted; no step remains",
                                        standbys: nil)
                }
                step = next
            case "rollback":
                do {
                    step = try PhaseMachine.rollbackStep(from: state.phase)
                } catch {
                    return ChecksResult(step: "rollback", phase: state.phase, checks: [], refusal: "\(error)", standbys: nil)
                }
            case "switch-legacy": step = .switchLegacy
            case "switch": step = .switchModern
            case let name?: step = PhaseStep(name: name) ?? .expand
            }
            var refusal: String?
            do {
                if try runner.decision(for: step, state: state) == .alreadyDone {
                    refusal = "\(step) has happened already: running it would change nothing"
                }
            } catch let error as StepRefusal {
                refusal = error.reason ?? error.description
            }
            return ChecksResult(step: step.name, phase: state.phase, checks: try runner.checks(before: step, state: state),
                                refusal: refusal, standbys: try runner.standbyOverview(before: step))
        }
        console.printResult(result, format: format)
        return result.refusal == nil && result.checks.allSatisfy { $0.isPassed } ? .done : .refused
    }

    func showPlan() async throws -> ExitCode {
        let source = try planSource()
        console.printResult(PlanResult(source: source), format: format)
        return .done
    }

    func history() async throws -> ExitCode {
        let limit = parsed[PhaseCommandTree.limit] ?? 50
        let entries = try await withRunner { runner -> [PhaseHistoryEntry] in
            try ControlSchema.verify(on: runner.connection)
            return try PhaseHistory.list(plan: runner.plan.name, limit: limit, on: runner.connection)
        }
        console.printResult(HistoryResult(entries: entries), format: format)
        return .done
    }

    func pruneLedger() async throws -> ExitCode {
        let retention = parsed[PhaseCommandTree.olderThan] ?? LedgerPruner.defaultRetention
        let batchSize = parsed[PhaseCommandTree.pruneBatchSize] ?? 1000
        let configuration = configuration
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        defer { Task { await pool.shutdown() } }
        try await pool.withConnection { try ControlSchema.verify(on: $0) }
        if isDryRun {
            let seconds = Double(retention.components.seconds)
            let expired = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM cutover.operation_ledger WHERE committed_at < now() - make_interval(secs => \(seconds))
                    """)[0].decode(Int64.self, "n")
            }
            console.printResult(PruneResult(deleted: expired, batches: 0, isComplete: false, isDryRun: true), format: format)
            return .done
        }
        let reporter = console.progress(label: "ledger prune", total: nil, isQuiet: isQuiet)
        let report = try await LedgerPruner(pool: pool, batchSize: batchSize).prune(olderThan: retention) { deleted in
            reporter.update(completed: deleted)
        }
        reporter.finish()
        console.printResult(PruneResult(deleted: Int64(report.deleted), batches: report.batches, isComplete: report.isComplete,
                                        isDryRun: false), format: format)
        return .done
    }
}
