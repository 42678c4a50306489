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

    /// The full text for standard error, ending in a newline.
    public var text: String {
        Console.errorText(message, details: details, style: TextStyle(isEnabled: false))
    }

    /// The lines after the message: the usage line and where to read more.
    var details: [String] {
        ["Usage: \(usage)", "  See '\(commandPath.joined(separator: " ")) --help' for more information."]
    }
}
