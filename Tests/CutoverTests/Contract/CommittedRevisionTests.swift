import Cutover
import Testing

@Suite("The revision a save commits")
struct CommittedRevisionTests {
    private func request(expecting revision: Int64) -> SaveDraft {
        SaveDraft(operationScope: "s", operationID: "o", draftID: "d", expectedRevision: revision,
                  content: DraftContent(title: "t"))
    }

    @Test("successful saves", arguments: [
        (Int64(0), Int64?.none, Int64(1)),
        (1, 1, 2),
        (41, 41, 42),
        (.max - 1, .max - 1, .max),
    ])
    func commits(_ expected: Int64, _ current: Int64?, _ next: Int64) throws {
        #expect(try request(expecting: expected).committedRevision(over: current) == next)
    }

    @Test("refused saves", arguments: [
        (Int64(0), Int64?.some(1), SaveFailure.conflict(expected: 0, current: 1)),
        (1, nil, .notFound),
        (.max, nil, .notFound),
        (2, 1, .conflict(expected: 2, current: 1)),
        (1, 2, .conflict(expected: 1, current: 2)),
        (.max, .max, .exhausted),
        (.max - 1, .max, .conflict(expected: .max - 1, current: .max)),
    ])
    func refuses(_ expected: Int64, _ current: Int64?, _ failure: SaveFailure) {
        #expect(throws: failure) { try request(expecting: expected).committedRevision(over: current) }
    }
}
