/// An error a command throws to end with a particular exit code and message.
///
/// ``CommandLineProgram`` prints `Error: <message>` and each detail line on standard error
/// (passwords redacted) and exits with ``exitCode``. Any other error ends with
/// ``ExitCode/error``.
public struct CommandFailure: Error, Sendable, Equatable {
    /// One line: what went wrong.
    public let message: String
    /// Further lines: what was observed, what to do.
    public let details: [String]
    /// How the program ends.
    public let exitCode: ExitCode

    /// A failure that ends the program with `exitCode`.
    public init(_ message: String, details: [String] = [], exitCode: ExitCode = .error) {
        self.message = message
        self.details = details
        self.exitCode = exitCode
    }
}
