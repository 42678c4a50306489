import CommandLineKit
import Foundation
import CutoverPostgres

/// `phase status`: the phase, the writer path, the epoch, each step and the next step's checks.
struct StatusCommand: PhaseCommand {
    static let spec = CommandSpec("status", abstract: "Show the phase, the writer path, the epoch, each step and the next step's checks.",
                                  parameters: StandbyParameters.parameters + [StepOptions.checkTimeout], command: Self.self)

    let context: PhaseContext

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
    }

    func run() async throws -> ExitCode {
        var options = context.runnerOptions()
        options.rehearsalGate = StepOptions.rehearsalGate(environment: ProcessInfo.processInfo.environment)
        let result = try await context.withReadingRunner(options: options) { runner in
            let status = try runner.status()
            return StatusResult(status, standbys: try runner.standbyOverview(before: status.nextStep))
        }
        context.console.printResult(result, format: context.format)
        return .done
    }
}
