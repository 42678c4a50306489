/// A command line the parser cannot accept, with what it needs to tell the user so.
///
/// Written to standard error as
///
/// ```text
/// Error: invalid value '0' for '--batch-size': must be between 1 and 100000
/// Usage: phase backfill [--batch-size <batch-size>] [--dry-run]
///   See 'phase backfill --help' for more information.
/// ```
///
/// and the program exits with ``ExitCode/usage``.
public struct UsageError: Error, Sendable, Equatable {
    /// One line saying what is wrong, with a "did you mean" when one is close.
    public let message: String
    /// The words of the command the error was found in, root included: `["phase", "backfill"]`.
    public let commandPath: [String]
    /// That command's usage line, without the `Usage: ` prefix.
    public let usage: String

    /// The full text for standard error, without colour, ending in a newline.
    public var text: String {
        (["Error: " + message] + details).map { $0 + "\n" }.joined()
    }

    /// The lines after the message: the usage line and where to read more.
    public var details: [String] {
        ["Usage: \(usage)", "  See '\(commandPath.joined(separator: " ")) --help' for more information."]
    }
}
