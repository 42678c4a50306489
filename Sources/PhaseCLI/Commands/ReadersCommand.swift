import CommandLineKit
import CutoverPostgres

/// `phase readers`: the application instances registered with the plan and the formats they read.
struct ReadersCommand: PhaseCommand {
    /// `--reader-timeout`, which `switch` and `contract` take too.
    static let readerTimeout = Option(
        "reader-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: ReaderRegistry.defaultStaleAfter,
        valueName: "duration", help: "How long a registered reader stays live after its last heartbeat.")
    static let spec = CommandSpec("readers", abstract: "List the application instances registered with the plan and the formats their readers understand.",
                                  parameters: [Self.readerTimeout] + StandbyParameters.parameters, command: Self.self)

    let context: PhaseContext
    let readerTimeout: Duration

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        readerTimeout = parsed[Self.readerTimeout]
    }

    func run() async throws -> ExitCode {
        let staleAfter = readerTimeout
        let result = try await context.withReadingRunner(options: context.runnerOptions(readerStaleAfter: staleAfter)) { runner in
            try ControlSchema.verify(on: runner.connection)
            return ReadersResult(plan: runner.plan.name,
                                 readers: try ReaderRegistry.list(plan: runner.plan.name, staleAfter: staleAfter, on: runner.connection),
                                 standbys: try runner.standbyOverview(before: nil))
        }
        context.console.printResult(result, format: context.format)
        return .done
    }
}
