import CommandLineKit
/// Parameters every `phase` command that needs them declares the same way, so they are
/// spelled and explained once.
public enum StandardParameters {
    /// `--format text|json`: how results are written to standard output.
    public static let format = Option("format", type: .choice(OutputFormat.self), default: .text,
                                      help: "How results are written to standard output.")
    /// `--quiet`: no progress and no diagnostics that are not errors.
    public static let quiet = Flag("quiet", short: "q", help: "Print no progress and no notes, only results and errors.")
    /// `--dry-run`: on every command that changes something.
    public static let dryRun = Flag("dry-run", help: "Show what would change without changing anything.")
}
