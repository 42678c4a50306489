import CommandLineKit
import CutoverPostgres

/// `phase history`: every attempt, with role, OS user, duration, outcome, error and checksum.
struct HistoryCommand: PhaseCommand {
    /// `--limit`
    static let limit = Option("limit", type: .integer(in: 1...10_000), default: 50,
                              valueName: "count", help: "How many attempts to show, the most recent.")
    static let spec = CommandSpec("history", abstract: "List the steps attempted, refused, failed and interrupted ones included.",
                                  parameters: [Self.limit], command: Self.self)

    let context: PhaseContext
    let limit: Int

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        limit = parsed[Self.limit]
    }

    func run() async throws -> ExitCode {
        let limit = limit
        let entries = try await context.withReadingRunner { runner -> [PhaseHistoryEntry] in
            try ControlSchema.verify(on: runner.connection)
            return try PhaseHistory.list(plan: runner.plan.name, limit: limit, on: runner.connection)
        }
        context.console.printResult(HistoryResult(entries: entries), format: context.format)
        return .done
    }
}
