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
    /// Keys are sorted by their UTF-8 bytes. Strings escape `"` and `\`, write U+0008, U+0009,
    /// U+000A, U+000C and U+000D as `\b \t \n \f \r` and every other character below U+0020 as
    /// `\u00xx`; everything else, non-ASCII included, is written as it is.
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
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\u{08}": output += "\\b"
            case "\t": output += "\\t"
            case "\n": output += "\\n"
            case "\u{0C}": output += "\\f"
            case "\r": output += "\\r"
            // DEL and C1 need no escape in JSON, but escaped they reach no terminal raw.
            case "\u{00}"..."\u{1F}", "\u{7F}"..."\u{9F}":
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
