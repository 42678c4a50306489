import Cutover
import CutoverTestSupport
import Testing

@Suite("Validating save requests")
struct SaveDraftValidationTests {
    private func valid(_ change: (inout SaveDraft) -> Void) -> SaveDraft {
        var request = InvalidSaveRequest.valid
        change(&request)
        return request
    }

    @Test("the table's valid request passes")
    func validRequestPasses() throws {
        #expect(InvalidSaveRequest.valid.violation == nil)
        try InvalidSaveRequest.valid.validate()
    }

    @Test("each invalid input is refused with its violation", arguments: InvalidSaveRequest.all)
    func invalidInputIsRefused(_ row: InvalidSaveRequest) {
        #expect(row.request.violation == row.violation)
        #expect(throws: SaveFailure.invalid(row.violation)) { try row.request.validate() }
    }

    @Test("every limit's boundary itself is accepted")
    func boundariesAreAccepted() {
        let atLimits = [
            valid { $0.operationID = String(repeating: "o", count: 255) },
            valid { $0.operationScope = String(repeating: "s", count: 255) },
            valid { $0.draftID = String(repeating: "d", count: 255) },
            valid { $0.content.title = String(repeating: "t", count: SaveLimits.maximumTitleLength) },
            valid { $0.content.title = "t" },
            valid { $0.content.body = String(repeating: "b", count: SaveLimits.maximumBodyLength) },
            valid { $0.content.body = "" },
            valid { $0.content.tags = (0..<SaveLimits.maximumTagCount).map { "tag-\($0)" } },
            valid { $0.content.tags = [String(repeating: "g", count: SaveLimits.maximumTagLength)] },
            valid { $0.content.tags = [] },
            valid { $0.expectedRevision = .max },
        ]
        for request in atLimits {
            #expect(request.violation == nil)
        }
    }

    @Test("lengths count Unicode scalars, as PostgreSQL's char_length does")
    func lengthsCountScalars() {
        let limit = SaveLimits.maximumTitleLength
        // 200 scalars of two UTF-8 bytes each: within the limit.
        #expect(valid { $0.content.title = String(repeating: "\u{E9}", count: limit) }.violation == nil)
        // 200 characters, but 400 scalars (e + combining acute): over the limit.
        #expect(valid { $0.content.title = String(repeating: "e\u{301}", count: limit) }.violation
            == .tooLong(.title, maximum: limit))
        // 100 emoji with a skin tone: 100 characters, 200 scalars: within; one more is over.
        #expect(valid { $0.content.title = String(repeating: "\u{1F44D}\u{1F3FD}", count: limit / 2) }.violation == nil)
        #expect(valid { $0.content.title = String(repeating: "\u{1F44D}\u{1F3FD}", count: limit / 2 + 1) }.violation
            == .tooLong(.title, maximum: limit))
    }

    @Test("the first broken field in declaration order is reported")
    func firstViolationWins() {
        let request = valid {
            $0.content.title = ""
            $0.operationID = ""
            $0.expectedRevision = -1
        }
        #expect(request.violation == .empty(.operationID))
        #expect(valid { $0.content.title = ""; $0.expectedRevision = -1 }.violation == .negativeExpectedRevision)
        #expect(valid { $0.content.tags = ["", String(repeating: "g", count: 65)] }.violation == .empty(.tag(index: 0)))
    }
}
