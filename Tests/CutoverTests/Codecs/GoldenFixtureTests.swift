import Cutover
import Testing

/// The exact bytes of each stored format; an accidental change of a format fails here.
@Suite("Golden bytes of the stored formats")
struct GoldenFixtureTests {
    static let content = DraftContent(
        title: "Plan \"Q3\" \\ caf\u{E9}",
        body: "Line 1\nLine 2\tTabbed\u{1}",
        tags: ["finance", "\u{E9}t\u{E9}", "\u{1F680}"])

    @Test("v1 is the title's UTF-8 bytes and nothing else")
    func v1Bytes() throws {
        let golden = try Fixture.bytes("draft.v1")
        #expect(DraftCodecV1().encode(Self.content) == EncodedDraft(format: .v1, bytes: golden))
        #expect(try DraftCodecV1().decode(golden) == DraftContent(title: Self.content.title))
    }

    @Test("v2 is the canonical JSON document")
    func v2Bytes() throws {
        let golden = try Fixture.bytes("draft.v2.json")
        #expect(DraftCodecV2().encode(Self.content) == EncodedDraft(format: .v2, bytes: golden))
        #expect(try DraftCodecV2().decode(golden).exactBytes == Self.content.exactBytes)
    }

    @Test("v2 writes the defaults explicitly")
    func v2DefaultsBytes() throws {
        let golden = try Fixture.bytes("draft-defaults.v2.json")
        let defaults = DraftContent(title: Self.content.title)
        #expect(DraftCodecV2().encode(defaults).bytes == golden)
        #expect(try DraftCodecV2().decode(golden) == defaults)
    }

    @Test("the format markers are the strings stores keep")
    func markers() {
        #expect(DraftFormat.v1.rawValue == "v1")
        #expect(DraftFormat.v2.rawValue == "v2")
        #expect(DraftCodecV2.version == 2)
    }
}
