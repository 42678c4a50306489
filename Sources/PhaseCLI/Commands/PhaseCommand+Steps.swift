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
        if parsed.path == ["switch"], parsed[PhaseCommandTree.waitForFleet] { return try await switchAndWaitForFleet(step) }
        let epoch = expectedEpoch
        let result = try await withReconnectingRunner(step: step) { runner in try StepResult(runner.run(step, expectedEpoch: epoch)) }
        console.printResult(result, format: format)
        return .done
    }

    /// Runs the switch, then waits until every live registered instance reports its epoch:
    /// progress on standard error, the result on standard output, and exit 4 with one line saying
    /// what to do when `--fleet-timeout` passes first.
    func switchAndWaitForFleet(_ step: PhaseStep) async throws -> ExitCode {
        let epoch = expectedEpoch
        let timeout = parsed[PhaseCommandTree.fleetTimeout] ?? .seconds(150)
        let staleAfter = parsed[PhaseCommandTree.readerTimeout] ?? ReaderRegistry.defaultStaleAfter
        let note: @Sendable (String) -> Void = { [self] line in self.note(line) }
        let result = try await withRunner { runner -> FleetWaitResult in
            let report = try runner.run(step, expectedEpoch: epoch)
            note("\(step.name) \(report.isAlreadyDone ? "was done already" : "committed") at epoch \(report.epoch); "
                 + "waiting up to \(DurationText.format(timeout)) for the fleet to follow it")
            let catchUp = try FleetCatchUp.wait(plan: runner.plan.name, epoch: report.epoch, timeout: timeout, staleAfter: staleAfter,
                                                isStopRequested: { StopSignals.shared.isStopRequested },
                                                on: runner.connection) { note(FleetWaitResult.summary($0)) }
            return FleetWaitResult(step: StepResult(report), catchUp: catchUp)
        }
        console.printResult(result, format: format)
        guard result.catchUp.isComplete else {
            let behind = result.catchUp.behind
            throw CommandFailure(
                "\(step.name) committed at epoch \(result.catchUp.epoch), but \(behind.count) of "
                    + "\(behind.count + result.catchUp.following.count) live instances did not report following it within "
                    + "\(DurationText.format(timeout)): \(behind.map { DisplayText.unquoted($0.description, limit: 300) }.joined(separator: ", "))",
                details: ["they may still start saves down the old path; look at them ('phase readers'), then run the same command "
                          + "again to wait again (it changes nothing), or 'phase rollback switch'"],
                exitCode: .fleetBehind)
        }
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
        if let lag = parsed[PhaseCommandTree.maxReplicaLag] { pace.replicaLag = ReplicaLagCeiling(maximum: lag) }
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
            let files = isAlreadyDone ? [] : runner.files(for: step)
            if isAlreadyDone { refusal = nil }
            return DryRunResult(step: step.name, phase: state.phase, refusal: refusal, isAlreadyDone: isAlreadyDone, checks: checks,
                                files: files.map { ($0.path, $0.runsInTransaction, runner.source.text($0.path)) })
        }
        console.printResult(result, format: format)
        if result.refusal != nil || result.checks.contains(where: { !$0.isPassed }) { return .refused }
        return .done
    }
}
