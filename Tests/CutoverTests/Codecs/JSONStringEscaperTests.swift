import Cutover
import Testing

/// The one JSON string escaper: the codecs' canonical escapes, and the CLI's, which add DEL and
/// the C1 controls.
@Suite("JSONStringEscaper")
struct JSONStringEscaperTests {
    private let text = "q\"b\\\u{08}\u{09}\u{0A}\u{0C}\u{0D}\u{01}\u{1F} /\u{7F}\u{85}\u{9F}\u{A0}é€😀"

    @Test func theCanonicalFormEscapesOnlyWhatJSONRequires() {
        #expect(JSONStringEscaper.quoted(text)
                == "\"q\\\"b\\\\\\b\\t\\n\\f\\r\\u0001\\u001f /\u{7F}\u{85}\u{9F}\u{A0}é€😀\"")
    }

    @Test func terminalOutputEscapesDELAndC1TooAndNothingElse() {
        #expect(JSONStringEscaper.quoted(text, escaping: .terminalControls)
                == "\"q\\\"b\\\\\\b\\t\\n\\f\\r\\u0001\\u001f /\\u007f\\u0085\\u009f\u{A0}é€😀\"")
    }

    @Test func bytesAppendToWhatIsThere() {
        var output = Array("[".utf8)
        JSONStringEscaper.write("\u{85}", to: &output, escaping: .terminalControls)
        JSONStringEscaper.write("", to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "[\"\\u0085\"\"\"")
    }
}
