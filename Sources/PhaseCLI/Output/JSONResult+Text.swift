import Cutover

extension JSONResult {
    /// How much white space the text gets.
    public enum Layout: Sendable {
        /// One line, no spaces: for piping and logs.
        case compact
        /// Two-space indentation, one member or element per line, `"key": value`.
        case pretty
    }

    /// The value as JSON text, without a final newline.
    ///
    /// Keys are sorted by their UTF-8 bytes. Strings are escaped by `JSONStringEscaper`, DEL and
    /// the C1 controls included, so that no control character reaches a terminal raw;
    /// everything else, non-ASCII included, is written as it is.
    public func text(_ layout: Layout = .compact) -> String {
        var output = ""
        write(to: &output, layout: layout, depth: 0)
        return output
    }

    private func write(to output: inout String, layout: Layout, depth: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .number(let value): output += Self.numberText(value)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            Self.writeContainer(elements, open: "[", close: "]", to: &output, layout: layout, depth: depth) {
                element, output in element.write(to: &output, layout: layout, depth: depth + 1)
            }
        case .object(let members):
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            Self.writeContainer(sorted, open: "{", close: "}", to: &output, layout: layout, depth: depth) {
                member, output in
                Self.writeString(member.key, to: &output)
                output += layout == .pretty ? ": " : ":"
                member.value.write(to: &output, layout: layout, depth: depth + 1)
            }
        }
    }

    private static func writeContainer<Element>(_ elements: [Element], open: String, close: String,
                                                to output: inout String, layout: Layout, depth: Int,
                                                writeElement: (Element, inout String) -> Void) {
        output += open
        let isPretty = layout == .pretty && !elements.isEmpty
        for (index, element) in elements.enumerated() {
            if index > 0 { output += "," }
            if isPretty { output += "\n" + String(repeating: "  ", count: depth + 1) }
            writeElement(element, &output)
        }
        if isPretty { output += "\n" + String(repeating: "  ", count: depth) }
        output += close
    }

    private static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        // Whole numbers that Int64 holds exactly are written without a fraction: 3, not 3.0.
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return String(value)
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += JSONStringEscaper.quoted(text, escaping: .terminalControls)
    }
}
