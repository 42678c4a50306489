/// A command declared once: its name, what it does, and what it takes. Parsing and help
/// both come from this one declaration.
///
/// Options and flags of a command are accepted by every command below it too, before or after
/// the subcommand's name, so the root's options are the global ones.
///
/// ```swift
/// static let spec = CommandSpec(
///     "backfill",
///     abstract: "Convert rows that only have the legacy representation.",
///     discussion: "Works in keyset batches and resumes from a stored cursor.",
///     parameters: [batchSize, dryRun],
///     command: Backfill.self)
/// ```
public struct CommandSpec: Sendable {
    /// The word that selects it, kebab-case.
    public let name: String
    /// One line: what the command does.
    public let abstract: String
    /// More about it, for its own help page; may hold several paragraphs.
    public let discussion: String
    /// Options, flags and arguments, in the order usage shows them.
    let parameters: [ParameterDeclaration]
    /// Groups of options and flags of which at most one may be given, by display name.
    let exclusiveGroups: [[String]]
    /// The commands below this one, in the order help lists them.
    public let subcommands: [CommandSpec]
    /// The type that runs it, handed back in ``ParsedCommand/command``; nil for a command
    /// that only groups others.
    public let command: (any ParsableCommand.Type)?

    /// Declares a command.
    ///
    /// - Parameters:
    ///   - name: the kebab-case word that selects it.
    ///   - abstract: one line for the overview and for its parent's list of subcommands.
    ///   - discussion: paragraphs for its own help page, separated by blank lines.
    ///   - parameters: its options, flags and arguments.
    ///   - mutuallyExclusive: groups of its options and flags (or its ancestors') that may not
    ///     be given together.
    ///   - subcommands: commands below it; a command with subcommands takes no arguments.
    ///   - command: the type that runs it.
    public init(_ name: String, abstract: String, discussion: String = "",
                parameters: [any CommandParameter] = [], mutuallyExclusive: [[any CommandParameter]] = [],
                subcommands: [CommandSpec] = [], command: (any ParsableCommand.Type)? = nil) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.parameters = parameters.map(\.declaration)
        self.exclusiveGroups = mutuallyExclusive.map { group in group.map(\.declaration.displayName) }
        self.subcommands = subcommands
        self.command = command
    }

    var arguments: [ParameterDeclaration] { parameters.filter { $0.kind == .argument } }
    var namedParameters: [ParameterDeclaration] { parameters.filter { $0.kind != .argument } }

    func subcommand(named word: String) -> CommandSpec? {
        subcommands.first { $0.name == word }
    }
}
