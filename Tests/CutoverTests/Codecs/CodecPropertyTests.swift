import Cutover
import Testing

/// Properties over generated drafts; each seed replays the same drafts.
@Suite("Codec properties over generated drafts")
struct CodecPropertyTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xDEAD_BEEF]
    static let draftsPerSeed = 250

    private func forEachDraft(
        seed: UInt64,
        count: Int = draftsPerSeed,
        _ check: (DraftContent, inout DraftGenerator) throws -> Void
    ) rethrows {
        var generator = DraftGenerator(seed: seed)
        for _ in 0..<count {
            try check(generator.content(), &generator)
        }
    }

    @Test("v2 round-trips every field exactly, and its encoding is canonical", arguments: seeds)
    func v2RoundTrip(seed: UInt64) throws {
        try forEachDraft(seed: seed) { content, _ in
            let encoded = DraftCodecV2().encode(content)
            let decoded = try DraftCodecV2().decode(encoded.bytes)
            #expect(decoded.exactBytes == content.exactBytes)
            #expect(DraftCodecV2().encode(decoded) == encoded)
        }
    }

    @Test("v2's encoding is the canonical form: rewriting it through the JSON reader and writer changes no byte", arguments: seeds)
    func v2EncodingIsCanonical(seed: UInt64) throws {
        try forEachDraft(seed: seed) { content, _ in
            let encoded = DraftCodecV2().encode(content).bytes
            // A legacy write of the same title parses the document and writes it back canonically.
            let rewritten = try DraftCodecV2().mergingLegacyTitle(content.title, into: encoded)
            #expect(rewritten == encoded)
        }
    }

    @Test("v1 round-trips the title exactly and reads with the defaults", arguments: seeds)
    func v1RoundTrip(seed: UInt64) throws {
        try forEachDraft(seed: seed) { content, _ in
            let decoded = try DraftCodecV1().decode(DraftCodecV1().encode(content).bytes)
            #expect(decoded.exactBytes == DraftContent(title: content.title).exactBytes)
        }
    }

    @Test("a new reader reads v1 drafts; an old reader reads v2 drafts", arguments: seeds)
    func crossReading(seed: UInt64) throws {
        let registry = DraftCodecRegistry.standard
        try forEachDraft(seed: seed) { content, _ in
            let newReaderOfV1 = try registry.decode(DraftCodecV1().encode(content), draftID: "d")
            #expect(newReaderOfV1.exactBytes == DraftContent(title: content.title).exactBytes)

            let legacyView = try registry.legacyRepresentation(of: DraftCodecV2().encode(content), draftID: "d")
            #expect(legacyView.format == .v1)
            let oldReaderOfV2 = try DraftCodecV1().decode(legacyView.bytes)
            #expect(oldReaderOfV2.exactBytes == DraftContent(title: content.title).exactBytes)
        }
    }

    @Test("a rollback to the legacy writer loses nothing", arguments: seeds)
    func legacyWritesKeepModernFields(seed: UInt64) throws {
        try forEachDraft(seed: seed) { content, generator in
            let document = DraftCodecV2().encode(content).bytes
            let newTitle = generator.text(length: 1...20)
            let merged = try DraftCodecV2().mergingLegacyTitle(newTitle, into: document)
            var expected = content
            expected.title = newTitle
            #expect(try DraftCodecV2().decode(merged).exactBytes == expected.exactBytes)
            // Writing back the title an old reader read leaves the document byte for byte as it was.
            let unchanged = try DraftCodecV2().mergingLegacyTitle(try DraftCodecV1().decode(
                DraftCodecV1().encode(content).bytes).title, into: document)
            #expect(unchanged == document)
        }
    }

    @Test("every proper prefix of a v2 document is truncated", arguments: seeds)
    func prefixesAreTruncated(seed: UInt64) {
        // Every prefix of every draft is quadratic work; a tenth of the drafts keeps it quick.
        forEachDraft(seed: seed, count: Self.draftsPerSeed / 10) { content, _ in
            let document = DraftCodecV2().encode(content).bytes
            let misread = (0..<document.count).filter { length in
                do throws(MalformedDraftProblem) {
                    _ = try DraftCodecV2().decode(Array(document[..<length]))
                    return true
                } catch {
                    return error != .truncated
                }
            }
            #expect(misread == [], "prefix lengths not read as truncated")
        }
    }

    @Test("damaged documents are read or refused with a typed problem, never a crash", arguments: seeds)
    func damagedDocumentsNeverCrash(seed: UInt64) throws {
        try forEachDraft(seed: seed) { content, generator in
            var document = DraftCodecV2().encode(content).bytes
            for _ in 0..<generator.int(in: 1...3) {
                document[generator.int(in: 0...(document.count - 1))] = UInt8(generator.int(in: 0...255))
            }
            // Whatever still reads must survive a canonical round trip unchanged.
            if let survivor = try? DraftCodecV2().decode(document) {
                let again = try DraftCodecV2().decode(DraftCodecV2().encode(survivor).bytes)
                #expect(again.exactBytes == survivor.exactBytes)
            }
        }
    }
}
