import Cutover
import CutoverPostgres

extension PhaseContext {
    /// Runs `step` as the step options say: its dry run, or the step itself on a runner that
    /// reconnects after a lost session; prints the result.
    func runStep(_ step: PhaseStep, options: PhaseRunner.Options) async throws -> ExitCode {
        if steps.isDryRun { return try await dryRun(step, options: options) }
        let epoch = steps.expectedEpoch
        let result = try await withReconnectingRunner(step: step, options: options) { runner in
            try StepResult(runner.run(step, expectedEpoch: epoch))
        }
        console.printResult(result, format: format)
        return .done
    }

    /// What `step` would do: its checks now, and the SQL it would run. Changes nothing.
    func dryRun(_ step: PhaseStep, options: PhaseRunner.Options) async throws -> ExitCode {
        let epoch = steps.expectedEpoch
        let result = try await withRunner(options: options, isReadOnly: false) { runner -> DryRunResult in
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
