import Cutover
import Testing

@Suite("The v2 codec")
struct DraftCodecV2Tests {
    private func decode(_ json: String) throws(MalformedDraftProblem) -> DraftContent {
        try DraftCodecV2().decode(Array(json.utf8))
    }

    @Test("an encoding remembers the content it came from only while its bytes are unchanged")
    func encodedContent() {
        let content = DraftContent(title: "Plan", body: "Body", tags: ["a"])
        var encoded = DraftCodecV2().encode(content)
        #expect(encoded.encodedContent == content)
        // Not part of the value: the same bytes from anywhere else are equal, and hash alike.
        let sameBytes = EncodedDraft(format: .v2, bytes: encoded.bytes)
        #expect(sameBytes.encodedContent == nil)
        #expect(encoded == sameBytes)
        #expect(Set([encoded, sameBytes]).count == 1)
        encoded.bytes = DraftCodecV2().encode(DraftContent(title: "Other")).bytes
        #expect(encoded.encodedContent == nil)
        var reformatted = DraftCodecV2().encode(content)
        reformatted.format = .v1
        #expect(reformatted.encodedContent == nil)
    }

    @Test("controls are escaped, everything else is raw UTF-8")
    func escapes() {
        let title = "\u{0}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}\u{7F}/\u{2028}\u{E9}\"\\"
        let bytes = DraftCodecV2().encode(DraftContent(title: title)).bytes
        let expected = #"{"body":"","tags":[],"title":"\u0000\b\t\n\u000b\f\r\u001f"#
            + "\u{7F}/\u{2028}\u{E9}" + #"\"\\","version":2}"#
        #expect(bytes == Array(expected.utf8))
    }

    @Test("reading tolerates whitespace, member order, escapes and unknown members")
    func toleratesEquivalentDocuments() throws {
        let document = """
             { "version" : 2 , "future" : {"nested": [1, -2.5e+3, true, false, null]},
               "tags" : [ "\\u00e9t\\u00E9", "\\ud83d\\ude80" ] , "title" : "a\\/b" , "body" : "" }\t
            """
        #expect(try decode(document) == DraftContent(title: "a/b", body: "", tags: ["\u{E9}t\u{E9}", "\u{1F680}"]))
    }

    @Test("malformed documents are typed problems", arguments: [
        ("", MalformedDraftProblem.truncated),
        (#"{"body":""#, .truncated),
        (#"{"body":"","tags":[],"title":"t","version":2"#, .truncated),
        (#"{"body":"","tags":[],"title":"t","version":2} x"#, .trailingData(byteOffset: 46)),
        (#"[1]"#, .wrongType(field: "document", expected: .object, found: .array)),
        (#""text""#, .wrongType(field: "document", expected: .object, found: .string)),
        (#"{"body":"","tags":[],"title":"t"}"#, .missingField("version")),
        (#"{"body":"","tags":[],"title":"t","version":3}"#, .unexpectedVersion(found: "3")),
        (#"{"body":"","tags":[],"title":"t","version":2.0}"#, .unexpectedVersion(found: "2.0")),
        (#"{"body":"","tags":[],"title":"t","version":"2"}"#,
         .wrongType(field: "version", expected: .number, found: .string)),
        (#"{"body":"","tags":[],"version":2}"#, .missingField("title")),
        (#"{"body":"","tags":[],"title":5,"version":2}"#, .wrongType(field: "title", expected: .string, found: .number)),
        (#"{"tags":[],"title":"t","version":2}"#, .missingField("body")),
        (#"{"body":null,"tags":[],"title":"t","version":2}"#,
         .wrongType(field: "body", expected: .string, found: .null)),
        (#"{"body":"","title":"t","version":2}"#, .missingField("tags")),
        (#"{"body":"","tags":"a","title":"t","version":2}"#, .wrongType(field: "tags", expected: .array, found: .string)),
        (#"{"body":"","tags":["a",{}],"title":"t","version":2}"#,
         .wrongType(field: "tags[1]", expected: .string, found: .object)),
        (#"{"body":"","tags":[],"title":"t","title":"u","version":2}"#, .duplicateField(byteOffset: 33)),
        (#"{"body":"","tags":[],"title":"t","version":02}"#, .invalidSyntax(byteOffset: 44)),
        (#"{"body":"","tags":[],"title":"t",}"#, .invalidSyntax(byteOffset: 33)),
        (#"{"body":"\x","tags":[],"title":"t","version":2}"#, .invalidSyntax(byteOffset: 9)),
        (#"{"body":"\udc00","tags":[],"title":"t","version":2}"#, .invalidSyntax(byteOffset: 9)),
        (#"{"body":"\ud800x","tags":[],"title":"t","version":2}"#, .invalidSyntax(byteOffset: 15)),
        (#"{"body":"\ud800\u0041","tags":[],"title":"t","version":2}"#, .invalidSyntax(byteOffset: 9)),
        ("{\"body\":\"\u{9}\",\"tags\":[],\"title\":\"t\",\"version\":2}", .invalidSyntax(byteOffset: 9)),
        (#"{"body":"","tags":[],"title":"t","version":2,"x":tru}"#, .invalidSyntax(byteOffset: 52)),
    ])
    func rejectsMalformed(_ json: String, _ problem: MalformedDraftProblem) {
        #expect(throws: problem) { try decode(json) }
    }

    @Test("invalid UTF-8 inside a document is found by offset")
    func rejectsInvalidUTF8() {
        var bytes = Array(#"{"body":"","tags":[],"title":"?","version":2}"#.utf8)
        bytes[30] = 0xFF
        #expect(throws: MalformedDraftProblem.invalidUTF8(byteOffset: 30)) { try DraftCodecV2().decode(bytes) }
    }

    @Test("nesting is bounded so hostile documents cannot exhaust the stack")
    func boundsNesting() throws {
        func document(extraDepth: Int) -> String {
            let nested = String(repeating: "[", count: extraDepth) + String(repeating: "]", count: extraDepth)
            return #"{"body":"","tags":[],"title":"t","version":2,"x":"# + nested + "}"
        }
        #expect(try decode(document(extraDepth: 63)) == DraftContent(title: "t"))
        #expect(throws: MalformedDraftProblem.nestingTooDeep(maximum: 64)) { try decode(document(extraDepth: 64)) }
        #expect(throws: MalformedDraftProblem.nestingTooDeep(maximum: 64)) {
            try decode(String(repeating: "[", count: 100_000))
        }
    }

    @Test("a legacy write replaces the title and keeps every other member, canonically")
    func mergeKeepsOtherMembers() throws {
        let stored = #"{ "version": 2, "title": "Old", "body": "Kept", "tags": ["kept"], "later": {"b": 1, "a": [null]} }"#
        let merged = try DraftCodecV2().mergingLegacyTitle("New \"title\"", into: Array(stored.utf8))
        let expected = #"{"body":"Kept","later":{"a":[null],"b":1},"tags":["kept"],"title":"New \"title\"","version":2}"#
        #expect(merged == Array(expected.utf8))
    }

    @Test("a legacy write onto a document that is not valid v2 is refused")
    func mergeRefusesMalformed() {
        #expect(throws: MalformedDraftProblem.missingField("body")) {
            try DraftCodecV2().mergingLegacyTitle("New", into: Array(#"{"tags":[],"title":"t","version":2}"#.utf8))
        }
        #expect(throws: MalformedDraftProblem.unexpectedVersion(found: "3")) {
            try DraftCodecV2().mergingLegacyTitle("New", into: Array(#"{"body":"","tags":[],"title":"t","version":3}"#.utf8))
        }
    }
}
