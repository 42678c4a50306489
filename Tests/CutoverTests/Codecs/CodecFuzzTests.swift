import Cutover
import Testing

/// Damaged stored drafts, generated from fixed seeds: every reader answers with content or a
/// typed error naming the draft, never a crash, a hang or a silent default.
@Suite("Codecs under damage", .timeLimit(.minutes(3)))
struct CodecFuzzTests {
    @Test("damaged v2 documents decode or are refused with a typed error", arguments: [UInt64(7), 8, 0xBEEF])
    func damagedDocuments(seed: UInt64) {
        var mutator = JSONMutator(seed: seed)
        var generator = SeededGenerator(seed: seed)
        let originals = (0..<20).map { index in
            DraftCodecV2().encode(DraftContent(title: "Title \(index) \"quoted\" \\ é 👋", body: String(repeating: "b", count: index * 7),
                                               tags: (0..<(index % 4)).map { "tag\($0)" })).bytes
        }
        var decoded = 0
        var refused = 0
        for round in 0..<3_000 {
            let bytes = mutator.variant(of: originals.randomElement(using: &generator)!)
            let stored = EncodedDraft(format: .v2, bytes: bytes)
            do {
                let content = try DraftCodecRegistry.standard.decode(stored, draftID: "draft-\(round)")
                decoded += 1
                // What decodes, re-encodes and decodes to the same content.
                #expect(try DraftCodecV2().decode(DraftCodecV2().encode(content).bytes) == content)
            } catch {
                refused += 1
                #expect("\(error)".hasPrefix("draft \"draft-\(round)\" has malformed v2 data: "), "\(error)")
            }
            // A legacy write onto the same bytes either merges or is refused; never crashes.
            _ = try? DraftCodecV2().mergingLegacyTitle("new title", into: bytes)
        }
        #expect(decoded > 0 && refused > 0)
    }

    @Test("any bytes read as v1 are a title or a typed error", arguments: [UInt64(1), 2])
    func arbitraryLegacyBytes(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            do {
                let content = try DraftCodecRegistry.standard.decode(EncodedDraft(format: .v1, bytes: bytes), draftID: "d\(round)")
                #expect(Array(content.title.utf8) == bytes)
            } catch {
                #expect("\(error)".hasPrefix("draft \"d\(round)\" has malformed v1 data: "), "\(error)")
            }
        }
    }

    @Test func deeplyNestedDocumentsAreRefusedNotOverflowed() {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(throws: DraftDecodingError.self) {
            try DraftCodecRegistry.standard.decode(EncodedDraft(format: .v2, bytes: deep), draftID: "deep")
        }
    }
}
