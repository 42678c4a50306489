import Cutover
import Testing

@Suite("Save failures and outcome codes")
struct SaveFailureTests {
    @Test("outcome codes are the stable strings of SEMANTICS.md")
    func outcomeCodesAreStable() {
        #expect(SaveOutcome.allCases.map(\.code) == [
            "committed", "replayed", "conflict", "notFound", "invalid", "operationConflict", "exhausted",
            "outcomeUnknown",
        ])
    }

    @Test("each failure has its outcome code and one line that says what to do", arguments: [
        (SaveFailure.invalid(.tooLong(.title, maximum: 200)), SaveOutcome.invalid,
         "invalid save request: title is longer than 200 characters"),
        (.conflict(expected: 1, current: 2), .conflict,
         "revision conflict: expected revision 1, current revision 2; re-read the record"),
        (.notFound, .notFound, "record not found: the expected revision is above 0 but the record does not exist"),
        (.operationConflict, .operationConflict,
         "operation conflict: this operation ID was already committed in its scope with a different request"),
        (.exhausted, .exhausted, "revision exhausted: the record is at revision Int64.max and cannot be saved again"),
        (.outcomeUnknown, .outcomeUnknown,
         "outcome unknown: the save may have committed; retry with the same operation ID"),
    ])
    func failureDescribesItself(_ failure: SaveFailure, _ outcome: SaveOutcome, _ line: String) {
        #expect(failure.outcome == outcome)
        #expect(failure.description == line)
    }

    @Test("violations name the field and the limit", arguments: [
        (SaveViolation.empty(.operationID), "operation ID is empty"),
        (.tooLong(.operationScope, maximum: 255), "operation scope is longer than 255 characters"),
        (.containsNUL(.tag(index: 3)), "tag 3 contains a NUL character"),
        (.negativeExpectedRevision, "expected revision is negative"),
        (.tooManyTags(maximum: 32), "content has more than 32 tags"),
        (.empty(.draftID), "draft ID is empty"),
        (.containsNUL(.body), "body contains a NUL character"),
    ])
    func violationDescribesItself(_ violation: SaveViolation, _ line: String) {
        #expect(violation.description == line)
    }

    @Test("failures from a store never repeat the request's content")
    func noPayloadInDescriptions() async throws {
        let store = InMemoryDraftStore()
        let secret = "TOP-SECRET-\u{1F511}"
        func request(_ operationID: String, expected: Int64, title: String = secret) -> SaveDraft {
            SaveDraft(operationScope: "s", operationID: operationID, draftID: "d", expectedRevision: expected,
                      content: DraftContent(title: title, body: secret, tags: [secret]))
        }
        _ = try await store.save(request("first", expected: 0))
        let failing = [
            request("first", expected: 0, title: "other \(secret)"),
            request("stale", expected: 7),
            request("bad", expected: 1, title: secret + "\u{0}"),
            SaveDraft(operationScope: "s", operationID: "missing", draftID: "nowhere", expectedRevision: 2,
                      content: DraftContent(title: secret)),
        ]
        for request in failing {
            do {
                _ = try await store.save(request)
                Issue.record("expected a failure")
            } catch {
                #expect(!String(describing: error).contains("SECRET"))
                #expect(!String(describing: error).contains("\n"))
            }
        }
    }
}
