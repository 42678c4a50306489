import CommandLineKit

/// One `phase` command: its declaration, the typed values the command line gave it, and its
/// `run`.
///
/// The command tree names each command's type in its ``CommandSpec``; ``PhaseMain`` makes the
/// one the words chose and runs it, without looking at the words.
///
/// ```swift
/// struct HistoryCommand: PhaseCommand {
///     static let limit = Option("limit", type: .integer(in: 1...10_000), default: 50, help: "…")
///     static let spec = CommandSpec("history", abstract: "…", parameters: [Self.limit], command: Self.self)
///     let context: PhaseContext
///     let limit: Int
///     init(_ parsed: ParsedCommand, context: PhaseContext) { … }
///     func run() async throws -> ExitCode { … }
/// }
/// ```
protocol PhaseCommand: ParsableCommand {
    /// How the command is declared, for parsing and help.
    static var spec: CommandSpec { get }
    /// The command with the values `parsed` holds.
    init(_ parsed: ParsedCommand, context: PhaseContext)
    /// The global options and the console.
    var context: PhaseContext { get }
    /// The command as the operator names it in messages: `switch modern`, `ledger prune`.
    var invocation: String { get }
    /// What a stop by a signal leaves behind.
    var stopEffect: StopEffect { get }
    /// Runs the command; its result goes to standard output, progress to standard error.
    func run() async throws -> ExitCode
}

extension PhaseCommand {
    var invocation: String { Self.spec.name }
    var stopEffect: StopEffect { .changedNothing }
}
