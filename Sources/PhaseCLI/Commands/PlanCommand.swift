import CommandLineKit

/// `phase plan`: the plan's steps, their SQL and the locks they take, without a database.
struct PlanCommand: PhaseCommand {
    static let spec = CommandSpec("plan", abstract: "Show the plan's steps, their SQL and the locks they take; changes nothing.",
                                  command: Self.self)

    let context: PhaseContext

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
    }

    func run() async throws -> ExitCode {
        context.console.printResult(PlanResult(source: try context.planSource()), format: context.format)
        return .done
    }
}
