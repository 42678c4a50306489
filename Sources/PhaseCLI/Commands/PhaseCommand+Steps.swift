import Cutover
import CutoverPostgres
import Foundation
import PostgresClient

extension PhaseCommand {
    func initialize() async throws -> ExitCode {
        if isDryRun {
            let result = try await withRunner { runner in
                let version = try ControlSchema.installedVersion(on: runner.connection)
                let tracked = version == ControlSchema.version ? try MigrationState.load(plan: runner.plan.name, on: runner.connection) : nil
                return InitResult(plan: runner.plan.name, schema: nil, schemaVersionBefore: version, createdState: tracked == nil,
                                  isDryRun: true)
            }
            console.printResult(result, format: format)
            return .done
        }
        let result = try await withRunner { runner in
            let before = try ControlSchema.installedVersion(on: runner.connection)
            let outcome = try runner.initialize()
            return InitResult(plan: runner.plan.name, schema: outcome.schema, schemaVersionBefore: before,
                              createdState: outcome.createdState, isDryRun: false)
        }
        console.printResult(result, format: format)
        return .done
    }

    func runStep(_ step: PhaseStep) async throws -> ExitCode {
        if isDryRun { return try await dryRun(step) }
        let result = try await withRunner { runner in try StepResult(runner.run(step)) }
        console.printResult(result, format: format)
        return .done
    }

    func rollback() async throws -> ExitCode {
        if isDryRun {
            let step = try await withRunner { runner -> PhaseStep in
                do {
                    return try PhaseMachine.rollbackStep(from: try runner.state().phase)
                } catch let refusal as PhaseRefusal {
                    throw StepRefusal(step: "rollback", failedChecks: [], reason: refusal.description)
                }
            }
            return try await dryRun(step)
        }
        let result = try await withRunner { runner in try StepResult(runner.rollback()) }
        console.printResult(result, format: format)
        return .done
    }

    func contract() async throws -> ExitCode {
        guard isDryRun || parsed[PhaseCommandTree.yes] else {
            throw CommandFailure("contract removes the legacy representation and cannot be undone; pass --yes to confirm",
                                 details: ["run 'phase check contract' first, or 'phase contract --dry-run' to see what would run"],
                                 exitCode: .usage)
        }
        return try await runStep(.contract)
    }

    func backfill() async throws -> ExitCode {
        if isDryRun { return try await dryRun(.backfill) }
        var options = runnerOptions
        let plan = try planSource().plan
        // The plan's pace, and what the command line says instead.
        var pace = plan.step(.backfill)?.backfill.map(BackfillEngine.Options.init(plan:)) ?? BackfillEngine.Options()
        if let batchSize = parsed[PhaseCommandTree.batchSize] { pace.batchSize = batchSize }
        if let niceRatio = parsed[PhaseCommandTree.niceRatio] { pace.niceRatio = niceRatio }
        pace.batchDelay = parsed[PhaseCommandTree.batchDelay] ?? .zero
        pace.lockTimeout = options.sql.lockTimeout
        options.backfill = pace
        let reporter = console.progress(label: "backfill", total: nil, isQuiet: isQuiet)
        let result = try await withRunner(options: options) { runner in
            try StepResult(runner.run(.backfill) { progress in
                reporter.update(completed: Int(progress.converted), total: Int(progress.total))
            })
        }
        reporter.finish()
        console.printResult(result, format: format)
        return .done
    }

    /// What `step` would do: its checks now, and the SQL it would run. Changes nothing.
    func dryRun(_ step: PhaseStep) async throws -> ExitCode {
        let result = try await withRunner { runner -> DryRunResult in
            let state = try runner.state()
            var refusal: String?
            do {
                _ = try PhaseMachine.transition(from: state.phase, by: step)
            } catch {
                refusal = "\(error)"
            }
            let checks = refusal == nil ? try runner.checks(before: step, state: state) : []
            let files: [PlanSQLFile]
            switch step {
            case .expand, .contract: files = runner.plan.step(for: step)?.apply ?? []
            case .revertExpand: files = runner.plan.step(for: step)?.revert ?? []
            case .backfill:
                files = [runner.plan.step(.backfill)?.backfill?.batch].compactMap { $0 }
            case .switchModern, .switchLegacy: files = []
            }
            return DryRunResult(step: step.name, phase: state.phase, refusal: refusal, checks: checks,
                                files: files.map { ($0.path, $0.runsInTransaction, runner.source.text($0.path)) })
        }
        console.printResult(result, format: format)
        if result.refusal != nil || result.checks.contains(where: { !$0.isPassed }) { return .refused }
        return .done
    }
}
