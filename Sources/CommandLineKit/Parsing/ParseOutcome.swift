/// What the parser made of a command line.
public enum ParseOutcome: Sendable {
    /// A command to run.
    case command(ParsedCommand)
    /// Help was asked for (`--help`, `-h` or `phase help …`): the text for standard output.
    case help(String)
    /// The command line is wrong.
    case usageError(UsageError)
}
