import Cutover
import Testing

@Suite("The canonical request encoding")
struct CanonicalEncodingTests {
    private let request = SaveDraft(
        operationScope: "account-42", operationID: "edit-7", draftID: "draft-1", expectedRevision: 3,
        content: DraftContent(title: "Caf\u{E9}", body: "", tags: ["a", "bc"]))

    @Test("matches the golden bytes")
    func matchesGolden() throws {
        #expect(request.canonicalEncoding == (try Fixture.hex("save-draft-request.hex")))
    }

    @Test("changes when any field changes")
    func everyFieldCounts() {
        let changes: [(inout SaveDraft) -> Void] = [
            { $0.operationScope = "account-43" },
            { $0.operationID = "edit-8" },
            { $0.draftID = "draft-2" },
            { $0.expectedRevision = 4 },
            { $0.expectedRevision = -3 },
            { $0.content.title = "Cafe" },
            { $0.content.body = " " },
            { $0.content.tags = ["bc", "a"] },
            { $0.content.tags = ["a", "bc", ""] },
        ]
        for change in changes {
            var changed = request
            change(&changed)
            #expect(changed.canonicalEncoding != request.canonicalEncoding, "\(changed)")
        }
    }

    @Test("field boundaries cannot be shifted")
    func boundariesAreUnambiguous() {
        var split = request
        split.operationScope = "account-4"
        split.operationID = "2edit-7"
        #expect(split.canonicalEncoding != request.canonicalEncoding)
        var joined = request
        joined.content.tags = ["abc"]
        var apart = request
        apart.content.tags = ["ab", "c"]
        #expect(joined.canonicalEncoding != apart.canonicalEncoding)
        var inTitle = request
        inTitle.content = DraftContent(title: "x", body: "")
        var inBody = request
        inBody.content = DraftContent(title: "", body: "x")
        #expect(inTitle.canonicalEncoding != inBody.canonicalEncoding)
    }

    @Test("strings are encoded as given, without Unicode normalisation")
    func noNormalisation() {
        var decomposed = request
        decomposed.content.title = "Cafe\u{301}"
        // Swift's == treats the two titles as equal; the ledger must not.
        #expect(decomposed == request)
        #expect(decomposed.canonicalEncoding != request.canonicalEncoding)
    }

    @Test("distinct generated requests never share an encoding")
    func injectiveOverGeneratedRequests() {
        var generator = DraftGenerator(seed: 0xC0FFEE)
        var seen: [[UInt8]: SaveDraft] = [:]
        for _ in 0..<2_000 {
            let candidate = generator.request()
            if let earlier = seen[candidate.canonicalEncoding] {
                #expect(Self.exactFields(earlier) == Self.exactFields(candidate))
            }
            seen[candidate.canonicalEncoding] = candidate
        }
        #expect(seen.count > 1_000)
    }

    private static func exactFields(_ request: SaveDraft) -> [[UInt8]] {
        [Array(request.operationScope.utf8), Array(request.operationID.utf8), Array(request.draftID.utf8),
         Array(String(request.expectedRevision).utf8)] + request.content.exactBytes
            + [Array(String(request.content.tags.count).utf8)]
    }
}
