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

    /// The epoch the operator bound the command to with `--epoch`, if any.
    var expectedEpoch: Int64? { parsed[PhaseCommandTree.epoch].map(Int64.init) }

    func runStep(_ step: PhaseStep) async throws -> ExitCode {
        if isDryRun { return try await dryRun(step) }
        let epoch = expectedEpoch
        let result = try await withReconnectingRunner(step: step) { runner in try StepResult(runner.run(step, expectedEpoch: epoch)) }
        console.printResult(result, format: format)
        return .done
    }

    func rollback() async throws -> ExitCode {
        // The parser refuses a rollback without its step, so it is always there.
        let target = parsed[PhaseCommandTree.rollbackStep] ?? .switch
        return try await runStep(try PhaseRunner.rollbackStep(undoing: target.kind))
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
        let epoch = expectedEpoch
        let result = try await withReconnectingRunner(step: .backfill, options: options) { runner in
            try StepResult(runner.run(.backfill, expectedEpoch: epoch) { progress in
                reporter.update(completed: Int(progress.converted), total: Int(progress.total))
            })
        }
        reporter.finish()
        console.printResult(result, format: format)
        return .done
    }

    /// What `step` would do: its checks now, and the SQL it would run. Changes nothing.
    func dryRun(_ step: PhaseStep) async throws -> ExitCode {
        let epoch = expectedEpoch
        let result = try await withRunner { runner -> DryRunResult in
            let state = try runner.state()
            var refusal: String?
            var isAlreadyDone = false
            do {
                isAlreadyDone = try runner.decision(for: step, state: state, expectedEpoch: epoch) == .alreadyDone
            } catch let error as StepRefusal {
                refusal = error.reason ?? error.description
            }
            let checks = refusal == nil && !isAlreadyDone ? try runner.checks(before: step, state: state) : []
            var files: [PlanSQLFile] = []
            if !isAlreadyDone {
                switch step {
                case .expand, .contract: files = runner.plan.step(for: step)?.apply ?? []
                case .revertExpand, .revertContract: files = runner.plan.step(for: step)?.revert ?? []
                case .backfill: files = [runner.plan.step(.backfill)?.backfill?.batch].compactMap { $0 }
                case .switchModern, .switchLegacy: files = []
                }
            }
            if isAlreadyDone { refusal = nil }
            return DryRunResult(step: step.name, phase: state.phase, refusal: refusal, isAlreadyDone: isAlreadyDone, checks: checks,
                                files: files.map { ($0.path, $0.runsInTransaction, runner.source.text($0.path)) })
        }
        console.printResult(result, format: format)
        if result.refusal != nil || result.checks.contains(where: { !$0.isPassed }) { return .refused }
        return .done
    }
}
