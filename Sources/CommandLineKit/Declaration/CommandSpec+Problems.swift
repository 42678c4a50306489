extension CommandSpec {
    /// Mistakes in this declaration tree, one sentence each; empty when it is sound.
    ///
    /// The parser trusts the tree, so a test should assert that this is empty for every tree a
    /// program declares. It finds names that are not kebab-case, names or short names used twice
    /// on one path, `help` used as a name, arguments in an order the parser cannot match,
    /// commands with both subcommands and arguments, exclusive groups naming parameters the
    /// command cannot see, and defaults their own type rejects.
    public var problems: [String] {
        problems(inherited: [], path: name, isRoot: true)
    }

    private func problems(inherited: [ParameterDeclaration], path: String, isRoot: Bool) -> [String] {
        var found: [String] = []
        if !Self.isKebabCase(name) { found.append("command '\(path)' is not kebab-case") }
        let visible = inherited + namedParameters
        for parameter in parameters {
            let shown = "'\(parameter.displayName)' of '\(path)'"
            if !Self.isKebabCase(parameter.name) { found.append("\(shown) is not kebab-case") }
            if (parameter.kind != .argument && parameter.name == "help") || parameter.shortName == "h" {
                found.append("\(shown) takes the name reserved for help")
            }
            if let text = parameter.defaultText, let parse = parameter.parse, case .failure(let invalid) = parse(text) {
                found.append("\(shown) has a default '\(text)' that \(invalid.reason)")
            }
        }
        found += Self.repeats(in: visible.map(\.displayName)).map { "'\($0)' is declared twice on '\(path)'" }
        found += Self.repeats(in: visible.compactMap(\.shortName).map { "-\($0)" })
            .map { "'\($0)' is declared twice on '\(path)'" }
        found += Self.repeats(in: arguments.map(\.displayName)).map { "'\($0)' is declared twice on '\(path)'" }
        found += argumentOrderProblems(path: path)
        for group in exclusiveGroups {
            for member in group where !visible.contains(where: { $0.displayName == member }) {
                found.append("exclusive group on '\(path)' names '\(member)', which it does not have")
            }
        }
        if !subcommands.isEmpty && !arguments.isEmpty {
            found.append("'\(path)' has both subcommands and arguments")
        }
        found += Self.repeats(in: subcommands.map(\.name)).map { "subcommand '\($0)' is declared twice on '\(path)'" }
        if isRoot && subcommand(named: "help") != nil {
            found.append("'\(path) help' is reserved for help")
        }
        for subcommand in subcommands {
            found += subcommand.problems(inherited: visible, path: path + " " + subcommand.name, isRoot: false)
        }
        return found
    }

    private func argumentOrderProblems(path: String) -> [String] {
        var found: [String] = []
        var sawOptional = false
        for (index, argument) in arguments.enumerated() {
            if argument.isRequired && sawOptional {
                found.append("required '\(argument.displayName)' of '\(path)' follows an optional argument")
            }
            if argument.isRepeatable && index < arguments.count - 1 {
                found.append("repeatable '\(argument.displayName)' of '\(path)' is not the last argument")
            }
            sawOptional = sawOptional || !argument.isRequired
        }
        return found
    }

    private static func repeats(in names: [String]) -> [String] {
        var seen: Set<String> = []
        var repeated: [String] = []
        for name in names where !seen.insert(name).inserted && !repeated.contains(name) {
            repeated.append(name)
        }
        return repeated
    }

    static func isKebabCase(_ name: String) -> Bool {
        name.wholeMatch(of: /[a-z][a-z0-9]*(-[a-z0-9]+)*/) != nil
    }
}
