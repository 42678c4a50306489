/// Lays words out in lines no wider than a limit, for help text.
enum TextWrapper {
    /// The width of help text and usage lines.
    static let width = 80

    /// `words` joined by single spaces into lines of at most `width` characters; the first line
    /// starts with `firstPrefix` and the others with `prefix`. A word longer than a line gets a
    /// line of its own. The lines are joined by newlines, without a final one.
    static func wrap(_ words: [String], firstPrefix: String, prefix: String, width: Int = width) -> String {
        var lines: [String] = []
        var line = firstPrefix
        var lineHasWord = false
        for word in words where !word.isEmpty {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = prefix
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.map { $0.trailingSpacesRemoved }.joined(separator: "\n")
    }

    /// `text` wrapped paragraph by paragraph: each line of the text is wrapped on its own, with
    /// every line starting with `prefix`, and blank lines are kept.
    static func wrapParagraphs(_ text: String, prefix: String = "") -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.allSatisfy(\.isWhitespace)
                ? ""
                : wrap(line.split(separator: " ").map(String.init), firstPrefix: prefix, prefix: prefix)
        }.joined(separator: "\n")
    }
}

extension String {
    fileprivate var trailingSpacesRemoved: String {
        String(self[..<(lastIndex { $0 != " " }.map(index(after:)) ?? startIndex)])
    }
}
