@testable import Cutover
import Testing

@Suite("The v1 codec")
struct DraftCodecV1Tests {
    @Test("encoding keeps the title only")
    func encodesTitleOnly() {
        let encoded = DraftCodecV1().encode(DraftContent(title: "Plan", body: "dropped", tags: ["dropped"]))
        #expect(encoded == EncodedDraft(format: .v1, bytes: Array("Plan".utf8)))
    }

    @Test("decoding gives the documented defaults for body and tags")
    func decodesWithDefaults() throws {
        let content = try DraftCodecV1().decode(Array("Plan".utf8))
        #expect(content == DraftContent(title: "Plan", body: "", tags: []))
        #expect(content.body == DraftContent.defaultBody)
        #expect(content.tags == DraftContent.defaultTags)
    }

    @Test("whatever a legacy writer stored stays readable, empty or over the save limits")
    func readsBeyondSaveLimits() throws {
        #expect(try DraftCodecV1().decode([]) == DraftContent(title: ""))
        let long = String(repeating: "x", count: SaveLimits.maximumTitleLength * 5)
        #expect(try DraftCodecV1().decode(Array(long.utf8)).title == long)
    }

    @Test("bytes that are not UTF-8 are a typed problem with their offset", arguments: [
        ([0x41, 0xFF], MalformedDraftProblem.invalidUTF8(byteOffset: 1)),
        ([0x80], .invalidUTF8(byteOffset: 0)),
        ([0xC0, 0x80], .invalidUTF8(byteOffset: 0)),
        ([0x41, 0x42, 0xE0, 0x80, 0x80], .invalidUTF8(byteOffset: 2)),
        ([0xED, 0xA0, 0x80], .invalidUTF8(byteOffset: 0)),
        ([0xF4, 0x90, 0x80, 0x80], .invalidUTF8(byteOffset: 0)),
        ([0xF5, 0x80, 0x80, 0x80], .invalidUTF8(byteOffset: 0)),
        ([0xC3, 0x41], .invalidUTF8(byteOffset: 0)),
        ([0x41, 0xC3], .truncated),
        ([0xF0, 0x9F, 0x9A], .truncated),
    ] as [([UInt8], MalformedDraftProblem)])
    func rejectsInvalidUTF8(_ bytes: [UInt8], _ problem: MalformedDraftProblem) {
        #expect(throws: problem) { try DraftCodecV1().decode(bytes) }
    }

    @Test("the UTF-8 check agrees with the standard library on random bytes")
    func utf8CheckAgreesWithStandardLibrary() {
        var random = SeededGenerator(seed: 0x5EED)
        let interesting: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                    0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var disagreements: [[UInt8]] = []
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                interesting.randomElement(using: &random)!
            }
            let isValid = (try? UTF8Validation.validate(bytes)) != nil
            if isValid != (String(validating: bytes, as: UTF8.self) != nil) {
                disagreements.append(bytes)
            }
        }
        #expect(disagreements == [])
    }
}
