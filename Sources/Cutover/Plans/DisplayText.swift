/// Renders untrusted text for one-line messages: quoted, escaped and cut short.
///
/// Control, format and separator characters, unassigned and private-use code
/// points are written as `\u{…}`, so a message cannot break a line, reorder a
/// terminal's text or hide what it shows.
///
/// ```swift
/// DisplayText.unquoted("web\u{1B}[2J", limit: 255)   // web\u{1B}[2J, escape and all visible
/// ```
public enum DisplayText {
    /// The characters shown before a value is cut short.
    public static let shownLength = 40

    /// `text` in double quotes with `"` and `\` escaped, for example `"migrate"`.
    ///
    /// Longer text is cut after ``shownLength`` characters and followed by its length: `"aaaa"… (5000 characters)`.
    public static func quoted(_ text: String, limit: Int = shownLength) -> String {
        render(text, limit: limit, quote: "\"", escapedQuote: #"\""#)
    }

    /// `text` as an SQL literal, `'it''s'`, with the same escapes and cut as ``quoted(_:limit:)``.
    static func sqlQuoted(_ text: String, limit: Int = shownLength) -> String {
        render(text, limit: limit, quote: "'", escapedQuote: "''")
    }

    /// `text` without quotes, for values such as numbers that need none, escaped and cut as ``quoted(_:limit:)``.
    public static func unquoted(_ text: String, limit: Int = shownLength) -> String {
        render(text, limit: limit, quote: nil, escapedQuote: "")
    }

    /// `text` with every control character but the line feed and the tab written as `\u{…}`,
    /// and nothing else changed: what a terminal is given, whatever a value in it held, can
    /// neither move its cursor nor change its state.
    public static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) && scalar != "\n" && scalar != "\t" {
                output += escaped(scalar)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// `U+000A`: how a single refused character is named.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Whether `scalar` is a control character (category Cc), which manifest text never holds.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control
    }

    private static func render(_ text: String, limit: Int, quote: Unicode.Scalar?, escapedQuote: String) -> String {
        var output = quote.map(String.init) ?? ""
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            guard count <= limit else { continue }
            if scalar == quote {
                output += escapedQuote
            } else if scalar == "\\" {
                output += #"\\"#
            } else if isHidden(scalar) {
                output += escaped(scalar)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        output += quote.map(String.init) ?? ""
        return count > limit ? output + "… (\(count) characters)" : output
    }

    /// `\u{1B}`.
    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate: true
        case .spaceSeparator: scalar != " "
        default: false
        }
    }
}
