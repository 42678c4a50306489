/// How a command writes its result to standard output: `--format text|json`.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Lines for people.
    case text
    /// One JSON document with sorted keys, for programs.
    case json
}
