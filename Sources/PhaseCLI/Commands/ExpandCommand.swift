import CommandLineKit
import CutoverPostgres
import Foundation

/// `phase expand`: add the modern representation beside the legacy one.
struct ExpandCommand: PhaseCommand {
    static let spec = CommandSpec(
        "expand", abstract: "Add the modern representation next to the legacy one.",
        discussion: "Old application versions keep working; their writes are mirrored into the modern representation. Refused unless 'phase rehearse' of this very plan passed on this database (--skip-rehearsal overrides, and the history records it).",
        parameters: StepOptions.parameters + [StepOptions.skipRehearsal], command: Self.self)

    let context: PhaseContext
    let gate: RehearsalGate

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        gate = StepOptions.rehearsalGate(parsed, environment: ProcessInfo.processInfo.environment)
    }

    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        var options = context.runnerOptions()
        options.rehearsalGate = gate
        return try await context.runStep(.expand, options: options)
    }
}
