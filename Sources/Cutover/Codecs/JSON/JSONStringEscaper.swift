/// Writes text as a JSON string: the one escaper behind the codecs' canonical JSON and the
/// `phase` command's JSON output.
///
/// It escapes `"` and `\`, writes U+0008, U+0009, U+000A, U+000C and U+000D as
/// `\b \t \n \f \r` and every other control below U+0020 as `\u00xx` (lowercase hex); all
/// else, `/` and non-ASCII included, is written as raw UTF-8. With ``Extent/terminalControls``
/// DEL and the C1 controls (U+007F to U+009F) are escaped as `\u00xx` too: JSON needs no
/// escape for them, but escaped they reach no terminal raw.
///
/// ```swift
/// JSONStringEscaper.quoted("say \"hi\"\n")   // "\"say \\\"hi\\\"\\n\""
/// ```
public enum JSONStringEscaper {
    /// Which characters are escaped.
    public enum Extent: Sendable, Hashable {
        /// Only those JSON requires: the canonical form, byte for byte.
        case required
        /// Those, and DEL and the C1 controls, for text that may reach a terminal.
        case terminalControls
    }

    /// Appends `text` to `output` as a quoted JSON string.
    public static func write(_ text: String, to output: inout [UInt8], escaping extent: Extent = .required) {
        output.append(UInt8(ascii: "\""))
        var text = text
        let isEscapingTerminalControls = extent == .terminalControls
        // Bytes of multi-byte UTF-8 sequences are all 0x80 or above, so escaping byte by byte is
        // exact (a C1 control is the two bytes C2 80 to C2 9F); the runs between escapes are
        // copied whole.
        text.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let escaped: UInt8?
                var width = 1
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    escaped = byte
                } else if isEscapingTerminalControls, byte == 0x7F {
                    escaped = byte
                } else if isEscapingTerminalControls, byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                    escaped = bytes[index + 1]
                    width = 2
                } else {
                    escaped = nil
                }
                if let escaped {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    writeEscape(of: escaped, to: &output)
                    runStart = index + width
                }
                index += width
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// `text` as a quoted JSON string.
    public static func quoted(_ text: String, escaping extent: Extent = .required) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 2)
        write(text, to: &output, escaping: extent)
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes the escape of the character whose code (below U+0100) is `code`.
    private static func writeEscape(of code: UInt8, to output: inout [UInt8]) {
        switch code {
        case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
        case 0x08: output.append(contentsOf: #"\b"#.utf8)
        case 0x09: output.append(contentsOf: #"\t"#.utf8)
        case 0x0A: output.append(contentsOf: #"\n"#.utf8)
        case 0x0C: output.append(contentsOf: #"\f"#.utf8)
        case 0x0D: output.append(contentsOf: #"\r"#.utf8)
        default:
            output.append(contentsOf: #"\u00"#.utf8)
            output.append(hexDigit(code >> 4))
            output.append(hexDigit(code & 0x0F))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
