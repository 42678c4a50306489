import CommandLineKit
import PhaseCLI

/// What one run of a program printed and how it ended.
struct ProgramRun {
    var exitCode: ExitCode
    var output: String
    var diagnostics: String

    /// Runs `arguments` through `program` with captured streams; `perform` stands in for the
    /// commands and by default succeeds.
    static func of(_ arguments: [String], program: CommandLineProgram = SampleTree.program,
                   environment: [String: String] = [:], terminal: Bool = false,
                   perform: (ParsedCommand) async throws -> ExitCode = { _ in .done }) async -> ProgramRun {
        let output = CapturedOutput(isTerminal: terminal)
        let diagnostics = CapturedOutput(isTerminal: terminal)
        let console = Console(output: output, diagnostics: diagnostics, environment: environment,
                              redactor: TestRedactor.redactor)
        let code = await program.run(arguments, console: console, perform: perform)
        return ProgramRun(exitCode: code, output: output.text, diagnostics: diagnostics.text)
    }
}

extension ParseOutcome {
    /// The parsed command, or nil for help and usage errors.
    var command: ParsedCommand? {
        if case .command(let parsed) = self { parsed } else { nil }
    }

    /// The usage error, or nil.
    var usageError: UsageError? {
        if case .usageError(let error) = self { error } else { nil }
    }

    /// The help text, or nil.
    var help: String? {
        if case .help(let text) = self { text } else { nil }
    }
}
