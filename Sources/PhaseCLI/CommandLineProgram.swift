import CommandLineKit

/// A command-line program over a declared command tree: parses, prints help and usage errors
/// on the console, runs the chosen command and turns its outcome into an exit code.
///
/// `phase` is one (``PhaseMain`` runs ``PhaseCommandTree/program``); its whole `main` is:
///
/// ```swift
/// import PhaseCLI
/// import PostgresClient
///
/// let console = Console.standard(redactor: SecretRedactor { PasswordRedaction.redact($0) })
/// let code = await PhaseMain.run(Array(CommandLine.arguments.dropFirst()), console: console)
/// exit(code.rawValue)
/// ```
public struct CommandLineProgram: Sendable {
    /// The root command: its name is the program's, its options are the global ones.
    public let root: CommandSpec

    /// A program for the tree under `root`.
    public init(root: CommandSpec) {
        self.root = root
    }

    /// What `arguments` (the words after the program's name) ask for; nothing is printed.
    ///
    /// - Parameter environment: where options with an environment variable find their value
    ///   when they are not given.
    public func parse(_ arguments: [String], environment: [String: String] = [:]) -> ParseOutcome {
        CommandLineParser(root: root, environment: environment).parse(arguments)
    }

    /// Parses `arguments` and acts on them.
    ///
    /// Help goes to standard output and gives ``ExitCode/done``; a usage error goes to
    /// standard error and gives ``ExitCode/usage``; otherwise `perform` runs the command. A
    /// ``CommandFailure`` it throws is printed and gives its exit code; any other error is
    /// printed and gives ``ExitCode/error``. Everything printed to standard error passes
    /// through the console's redactor.
    public func run(_ arguments: [String], console: Console,
                    perform: (ParsedCommand) async throws -> ExitCode) async -> ExitCode {
        switch parse(arguments, environment: console.environment) {
        case .help(let text):
            console.output.write(text)
            return .done
        case .usageError(let error):
            console.printError(error.message, details: error.details)
            return .usage
        case .command(let parsed):
            do {
                return try await perform(parsed)
            } catch let failure as CommandFailure {
                console.printError(failure.message, details: failure.details)
                return failure.exitCode
            } catch {
                console.printError(String(describing: error))
                return .error
            }
        }
    }
}
