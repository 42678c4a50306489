import CommandLineKit

/// `phase expand`: add the modern representation beside the legacy one.
struct ExpandCommand: PhaseCommand {
    static let spec = CommandSpec(
        "expand", abstract: "Add the modern representation next to the legacy one.",
        discussion: "Old application versions keep working; their writes are mirrored into the modern representation.",
        parameters: StepOptions.parameters, command: Self.self)

    let context: PhaseContext

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
    }

    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        try await context.runStep(.expand, options: context.runnerOptions())
    }
}
