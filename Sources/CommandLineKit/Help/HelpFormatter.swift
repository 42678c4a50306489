/// Writes help pages and usage lines in swift-argument-parser's layout, from the declarations.
///
/// A command is given as its chain from the root: `[phase, ledger, prune]`, so that inherited
/// options and the full command name are known. A command's own options are listed under
/// `OPTIONS:`, the ones it accepts from the commands above it under `GLOBAL OPTIONS:`.
enum HelpFormatter {
    /// Where descriptions start in the ARGUMENTS, OPTIONS and SUBCOMMANDS sections.
    private static let descriptionColumn = 26
    private static let helpEntry = "-h, --help"
    private static let helpDescription = "Show help information."

    /// The whole help page for the last command of `chain`, ending in a newline.
    static func help(for chain: [CommandSpec]) -> String {
        let command = chain[chain.count - 1]
        var sections: [String] = []
        if !command.abstract.isEmpty {
            sections.append(TextWrapper.wrap(words("OVERVIEW: " + command.abstract), firstPrefix: "", prefix: ""))
        }
        if !command.discussion.isEmpty {
            sections.append(TextWrapper.wrapParagraphs(command.discussion))
        }
        sections.append("USAGE: " + usage(for: chain))
        if !command.arguments.isEmpty {
            sections.append("ARGUMENTS:\n" + command.arguments.map(entry).joined(separator: "\n"))
        }
        let helpLine = entry(label: helpEntry, description: helpDescription)
        sections.append("OPTIONS:\n" + (command.namedParameters.map(entry) + [helpLine]).joined(separator: "\n"))
        let inherited = chain.dropLast().flatMap(\.namedParameters)
        if !inherited.isEmpty {
            sections.append("GLOBAL OPTIONS:\n" + inherited.map(entry).joined(separator: "\n"))
        }
        if !command.subcommands.isEmpty {
            let helpPath = ([chain[0].name, "help"] + chain.dropFirst().map(\.name)).joined(separator: " ")
            sections.append("SUBCOMMANDS:\n"
                + command.subcommands.map { entry(label: $0.name, description: $0.abstract) }.joined(separator: "\n")
                + "\n\n  See '\(helpPath) <subcommand>' for detailed help.")
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// The usage line of the last command of `chain`, wrapped to follow a seven-character
    /// prefix such as `USAGE: ` or `Usage: `.
    static func usage(for chain: [CommandSpec]) -> String {
        let command = chain[chain.count - 1]
        var elements = [chain.map(\.name).joined(separator: " ")]
        elements += command.parameters.map(usageElement)
        if !command.subcommands.isEmpty { elements.append("<subcommand>") }
        let indent = String(repeating: " ", count: 7)
        return TextWrapper.wrap(elements, firstPrefix: indent, prefix: indent).dropFirst(indent.count).description
    }

    private static func usageElement(_ parameter: ParameterDeclaration) -> String {
        switch parameter.kind {
        case .flag:
            return "[\(parameter.displayName)]"
        case .option:
            return "[\(parameter.displayName) <\(parameter.valueName)>\(parameter.isRepeatable ? " ..." : "")]"
        case .argument:
            let shown = parameter.displayName + (parameter.isRepeatable ? " ..." : "")
            return parameter.isRequired ? shown : "[\(shown)]"
        }
    }

    private static func entry(_ parameter: ParameterDeclaration) -> String {
        var label = parameter.kind == .argument ? parameter.displayName : parameter.spellings
        if parameter.takesValue { label += " <\(parameter.valueName)>" }
        if parameter.kind == .option && parameter.isRepeatable { label += " ..." }
        var notes: [String] = []
        if !parameter.allowedValues.isEmpty { notes.append("values: " + parameter.allowedValues.joined(separator: ", ")) }
        if let constraint = parameter.constraint { notes.append(constraint) }
        if let defaultText = parameter.defaultText { notes.append("default: " + defaultText) }
        if let variable = parameter.environmentVariable { notes.append("env: " + variable) }
        let annotation = notes.isEmpty ? "" : "(" + notes.joined(separator: "; ") + ")"
        return entry(label: label, description: [parameter.help, annotation].filter { !$0.isEmpty }.joined(separator: " "))
    }

    /// `  label` then the description from the description column, wrapped; the description
    /// starts on the next line when the label reaches the column.
    private static func entry(label: String, description: String) -> String {
        let indent = String(repeating: " ", count: descriptionColumn)
        let shownLabel = "  " + label
        if shownLabel.count + 2 > descriptionColumn {
            return shownLabel + "\n" + TextWrapper.wrap(words(description), firstPrefix: indent, prefix: indent)
        }
        let padded = shownLabel + String(repeating: " ", count: descriptionColumn - shownLabel.count)
        return TextWrapper.wrap(words(description), firstPrefix: padded, prefix: indent)
    }

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ").map(String.init)
    }
}
