import Cutover
import Testing

@Suite("Reading stored drafts by format marker")
struct DraftCodecRegistryTests {
    private let registry = DraftCodecRegistry.standard
    private let content = DraftContent(title: "Plan", body: "Body", tags: ["a"])

    @Test("the marker picks the decoder")
    func markerPicksDecoder() throws {
        #expect(registry.supportedFormats == [.v1, .v2])
        #expect(try registry.decode(DraftCodecV1().encode(content), draftID: "d") == DraftContent(title: "Plan"))
        #expect(try registry.decode(DraftCodecV2().encode(content), draftID: "d") == content)
    }

    @Test("an unknown future format is an error naming it and the supported formats")
    func unknownFormatIsNamed() {
        let stored = EncodedDraft(format: DraftFormat(rawValue: "v3"), bytes: Array(#"{"version":3}"#.utf8))
        let expected = DraftDecodingError.unsupportedFormat(
            DraftFormat(rawValue: "v3"), draftID: "draft-9", supported: [.v1, .v2])
        #expect(throws: expected) { try registry.decode(stored, draftID: "draft-9") }
        #expect(expected.description
            == #"draft "draft-9" is stored in format "v3", which this reader cannot read; supported formats: v1, v2"#)
    }

    @Test("malformed data names the draft, the format and the problem")
    func malformedNamesDraft() {
        let stored = EncodedDraft(format: .v2, bytes: Array(#"{"body":"secret","tags":[],"title":7,"version":2}"#.utf8))
        let expected = DraftDecodingError.malformed(
            draftID: "draft-3", format: .v2, problem: .wrongType(field: "title", expected: .string, found: .number))
        #expect(throws: expected) { try registry.decode(stored, draftID: "draft-3") }
        #expect(expected.description
            == #"draft "draft-3" has malformed v2 data: field "title" should be a string but is a number"#)
        #expect(!expected.description.contains("secret"))
    }

    @Test("a registry reads only the formats it was given")
    func customRegistry() {
        let legacyOnly = DraftCodecRegistry(decoders: [DraftCodecV1()])
        #expect(legacyOnly.supportedFormats == [.v1])
        #expect(throws: DraftDecodingError.unsupportedFormat(.v2, draftID: "d", supported: [.v1])) {
            try legacyOnly.decode(DraftCodecV2().encode(content), draftID: "d")
        }
    }

    @Test("the legacy representation of any stored draft is its title as v1")
    func legacyRepresentation() throws {
        let v1 = DraftCodecV1().encode(content)
        #expect(try registry.legacyRepresentation(of: DraftCodecV2().encode(content), draftID: "d") == v1)
        #expect(try registry.legacyRepresentation(of: v1, draftID: "d") == v1)
    }
}

@Suite("What a store keeps after a write")
struct StoredAfterWritingTests {
    private let modern = DraftContent(title: "Modern", body: "Body", tags: ["kept"])
    private let v3 = EncodedDraft(format: DraftFormat(rawValue: "v3"), bytes: Array("{}".utf8))

    private func stored(_ write: EncodedDraft, over existing: EncodedDraft?) throws(DraftDecodingError) -> EncodedDraft {
        try EncodedDraft.stored(afterWriting: write, over: existing, draftID: "d")
    }

    @Test("a write is stored as written unless it is v1 onto v2")
    func storedAsWritten() throws {
        let legacy = DraftCodecV1().encode(DraftContent(title: "Legacy"))
        let modernWrite = DraftCodecV2().encode(modern)
        #expect(try stored(legacy, over: nil) == legacy)
        #expect(try stored(modernWrite, over: nil) == modernWrite)
        #expect(try stored(legacy, over: DraftCodecV1().encode(DraftContent(title: "Before"))) == legacy)
        #expect(try stored(modernWrite, over: legacy) == modernWrite)
        #expect(try stored(modernWrite, over: DraftCodecV2().encode(DraftContent(title: "Before"))) == modernWrite)
    }

    @Test("a v1 write onto v2 merges, keeping body and tags")
    func legacyOntoModernMerges() throws {
        let result = try stored(DraftCodecV1().encode(DraftContent(title: "Renamed")), over: DraftCodecV2().encode(modern))
        var expected = modern
        expected.title = "Renamed"
        #expect(result == DraftCodecV2().encode(expected))
    }

    @Test("no write lands on a format this build does not know")
    func unknownExistingFormatIsRefused() {
        for write in [DraftCodecV1().encode(modern), DraftCodecV2().encode(modern)] {
            #expect(throws: DraftDecodingError.unsupportedFormat(v3.format, draftID: "d", supported: [.v1, .v2])) {
                try stored(write, over: v3)
            }
        }
    }

    @Test("a write that cannot be read back is refused")
    func unreadableWritesAreRefused() {
        #expect(throws: DraftDecodingError.unsupportedFormat(v3.format, draftID: "d", supported: [.v1, .v2])) {
            try stored(v3, over: nil)
        }
        #expect(throws: DraftDecodingError.malformed(draftID: "d", format: .v2, problem: .truncated)) {
            try stored(EncodedDraft(format: .v2, bytes: Array("{".utf8)), over: nil)
        }
    }

    @Test("a v1 write onto a malformed v2 draft is refused; a v2 write replaces it")
    func malformedExisting() throws {
        let broken = EncodedDraft(format: .v2, bytes: Array(#"{"title":"t","version":2}"#.utf8))
        #expect(throws: DraftDecodingError.malformed(draftID: "d", format: .v2, problem: .missingField("body"))) {
            try stored(DraftCodecV1().encode(modern), over: broken)
        }
        #expect(try stored(DraftCodecV2().encode(modern), over: broken) == DraftCodecV2().encode(modern))
    }
}
