import CommandLineKit
import Foundation
import Cutover
import CutoverPostgres

/// `phase check [STEP]`: a step's checks, the next step's by default; changes nothing.
struct CheckCommand: PhaseCommand {
    /// `check`'s step.
    static let step = Argument(optional: "step", type: CheckTarget.valueType,
                               help: "The step whose checks to run; the next step when omitted.")
    static let spec = CommandSpec("check", abstract: "Run a step's checks without running the step; changes nothing.",
                                  parameters: [Self.step] + StandbyParameters.parameters + [StepOptions.checkTimeout], command: Self.self)

    let context: PhaseContext
    let target: CheckTarget?

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        target = parsed[Self.step]
    }

    func run() async throws -> ExitCode {
        let target = target
        var options = context.runnerOptions()
        options.rehearsalGate = StepOptions.rehearsalGate(environment: ProcessInfo.processInfo.environment)
        let result = try await context.withReadingRunner(options: options) { runner -> ChecksResult in
            let state = try runner.state()
            let step: PhaseStep
            switch target {
            case nil:
                guard let next = PhaseMachine.nextStep(from: state.phase) else {
                    return ChecksResult(step: "none", phase: state.phase, checks: [], refusal: "the plan is contracted; no step remains",
                                        standbys: nil)
                }
                step = next
            case .rollback?:
                do {
                    step = try PhaseMachine.rollbackStep(from: state.phase)
                } catch {
                    return ChecksResult(step: "rollback", phase: state.phase, checks: [], refusal: "\(error)", standbys: nil)
                }
            case .step(let named)?:
                step = named
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
        context.console.printResult(result, format: context.format)
        return result.refusal == nil && result.checks.allSatisfy { $0.isPassed } ? .done : .refused
    }
}
