/// Turns the words of a command line into a ``ParseOutcome`` for a declared command tree.
///
/// ```swift
/// switch CommandLineParser(root: tree, environment: environment).parse(arguments) {
/// case .help(let text): print(text, terminator: "")
/// case .usageError(let error): printError(error.text)
/// case .command(let parsed): try await run(parsed)
/// }
/// ```
public struct CommandLineParser: Sendable {
    /// The root command: its name is the program's, its options are the global ones.
    public let root: CommandSpec
    /// Where options with an environment variable find their value when they are not given.
    public let environment: [String: String]

    /// A parser for the tree under `root`.
    public init(root: CommandSpec, environment: [String: String] = [:]) {
        self.root = root
        self.environment = environment
    }

    /// What `words` (the arguments after the program's name) ask for.
    public func parse(_ words: [String]) -> ParseOutcome {
        // Help wins over any other mistake on the line: it is shown for the deepest command
        // the words reached, as `phase backfill --batch-size 0 --help` should show backfill's.
        let asksForHelp = words.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
        var walk = CommandLineWalk(root: root, environment: environment)
        do {
            switch try walk.run(words) {
            case .command(let parsed):
                return asksForHelp ? .help(HelpFormatter.help(for: walk.chain)) : .command(parsed)
            case .help(let chain):
                return .help(HelpFormatter.help(for: chain))
            }
        } catch {
            return asksForHelp ? .help(HelpFormatter.help(for: walk.chain)) : .usageError(error)
        }
    }
}

/// One pass over the words, collecting values as it descends the command tree.
private struct CommandLineWalk {
    enum Result {
        case command(ParsedCommand)
        case help([CommandSpec])
    }

    let environment: [String: String]
    /// The commands reached so far, root first.
    private(set) var chain: [CommandSpec]
    private var given: [String: [any Sendable]] = [:]
    /// Display names of the options and flags given on the command line, first use first.
    private var givenOrder: [String] = []
    private var flags: Set<String> = []
    private var argumentIndex = 0

    init(root: CommandSpec, environment: [String: String]) {
        self.environment = environment
        chain = [root]
    }

    private var command: CommandSpec { chain[chain.count - 1] }
    private var visibleNamed: [ParameterDeclaration] { chain.reversed().flatMap(\.namedParameters) }

    mutating func run(_ words: [String]) throws(UsageError) -> Result {
        var index = words.startIndex
        var optionsEnded = false
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if !optionsEnded {
                if word == "--" { optionsEnded = true; continue }
                if word == "-h" || word == "--help" { continue }
                if Self.looksLikeOption(word) {
                    try takeNamed(word, words: words, index: &index)
                    continue
                }
                if !command.subcommands.isEmpty {
                    if chain.count == 1 && word == "help" {
                        return .help(try helpChain(words[index...].prefix { !Self.looksLikeOption($0) }))
                    }
                    try descend(into: word)
                    continue
                }
            }
            try takeArgument(word)
        }
        return .command(try finish())
    }

    private mutating func descend(into word: String) throws(UsageError) {
        guard let subcommand = command.subcommand(named: word) else {
            let names = command.subcommands.map(\.name) + (chain.count == 1 ? ["help"] : [])
            throw failure("unknown command '\(word)'", suggesting: Suggestion.closest(to: word, among: names))
        }
        chain.append(subcommand)
    }

    /// The commands `phase help` names: the words after it, up to the first option.
    private mutating func helpChain(_ words: ArraySlice<String>) throws(UsageError) -> [CommandSpec] {
        for word in words { try descend(into: word) }
        return chain
    }

    private mutating func takeNamed(_ word: String, words: [String], index: inout Int) throws(UsageError) {
        let isLong = word.hasPrefix("--")
        let equals = isLong ? word.firstIndex(of: "=") : nil
        let spelling = equals.map { String(word[..<$0]) } ?? word
        let inline = equals.map { String(word[word.index(after: $0)...]) }
        let found = visibleNamed.first { parameter in
            isLong ? parameter.displayName == spelling : parameter.shortName.map { "-\($0)" } == spelling
        }
        guard let parameter = found else {
            let names = visibleNamed.map(\.displayName) + ["--help"]
            throw failure("unknown option '\(spelling)'", suggesting: Suggestion.closest(to: spelling, among: names))
        }
        let name = parameter.displayName
        if !givenOrder.contains(name) { givenOrder.append(name) }
        guard parameter.takesValue else {
            if inline != nil { throw failure("'\(name)' does not take a value") }
            flags.insert(name)
            return
        }
        let text: String
        if let inline {
            text = inline
        } else if index < words.endIndex && !Self.looksLikeOption(words[index]) && words[index] != "--" {
            text = words[index]
            index += 1
        } else {
            throw failure("missing value for '\(name)'")
        }
        if given[name] != nil && !parameter.isRepeatable {
            throw failure("'\(name)' may be given only once")
        }
        try store(text, for: parameter, source: "")
    }

    private mutating func takeArgument(_ word: String) throws(UsageError) {
        let arguments = command.arguments
        guard argumentIndex < arguments.count else { throw failure("unexpected argument '\(word)'") }
        let argument = arguments[argumentIndex]
        try store(word, for: argument, source: "")
        if !argument.isRepeatable { argumentIndex += 1 }
    }

    /// Parses and keeps one value; `source` names where it came from when that is not the
    /// command line, for example ` in DATABASE_URL`.
    private mutating func store(_ text: String, for parameter: ParameterDeclaration,
                                source: String) throws(UsageError) {
        guard let parse = parameter.parse else { return }
        switch parse(text) {
        case .success(let value):
            given[parameter.displayName, default: []].append(value)
        case .failure(let invalid):
            throw failure("invalid value '\(text)'\(source) for '\(parameter.displayName)': \(invalid.reason)",
                          suggesting: invalid.suggestion)
        }
    }

    private mutating func finish() throws(UsageError) -> ParsedCommand {
        if !command.subcommands.isEmpty {
            throw failure("'\(chain.map(\.name).joined(separator: " "))' needs a subcommand")
        }
        if let missing = command.arguments.first(where: { $0.isRequired && given[$0.displayName] == nil }) {
            let choices = missing.allowedValues.isEmpty ? "" : " (one of: \(missing.allowedValues.joined(separator: ", ")))"
            throw failure("missing argument '\(missing.displayName)'\(choices)")
        }
        for option in visibleNamed where given[option.displayName] == nil {
            if let variable = option.environmentVariable, let text = environment[variable], !text.isEmpty {
                try store(text, for: option, source: " in \(variable)")
            }
        }
        for group in chain.flatMap(\.exclusiveGroups) {
            let used = givenOrder.filter(group.contains)
            if used.count > 1 { throw failure("'\(used[0])' and '\(used[1])' cannot be used together") }
        }
        return ParsedCommand(path: chain.dropFirst().map(\.name), command: command.command, givenValues: given,
                             flagsGiven: flags)
    }

    private func failure(_ message: String, suggesting suggestion: String? = nil) -> UsageError {
        UsageError(message: suggestion.map { message + "; did you mean '\($0)'?" } ?? message,
                   commandPath: chain.map(\.name), usage: HelpFormatter.usage(for: chain))
    }

    /// Whether a word names an option rather than being a value: it starts with a dash, is not
    /// a lone dash (standard input, by convention) and is not a negative number.
    private static func looksLikeOption(_ word: String) -> Bool {
        word.hasPrefix("-") && word.count > 1 && word != "--" && Int(word) == nil
    }
}
