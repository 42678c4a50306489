import Cutover
import Testing

/// One row of the invalid-input table of SEMANTICS.md: a request and the violation every store must report.
public struct InvalidSaveRequest: Sendable, CustomTestStringConvertible {
    /// What is wrong, in a few words.
    public let name: String

    /// The request, which differs from ``valid`` in one field.
    public let request: SaveDraft

    /// The violation a store must throw as ``SaveFailure/invalid(_:)``.
    public let violation: SaveViolation

    /// The name, for test output.
    public var testDescription: String { name }

    /// A request that passes validation; every row changes one field of it. It creates `draft-1`.
    public static let valid = SaveDraft(
        operationScope: "account-1", operationID: "op-1", draftID: "draft-1", expectedRevision: 0,
        content: DraftContent(title: "Title", body: "Body", tags: ["tag"]))

    /// Every row: each limit of ``SaveLimits`` just past its boundary, and NUL in each text field.
    public static let all: [InvalidSaveRequest] = [
        row("empty operation ID", .empty(.operationID)) { $0.operationID = "" },
        row("operation ID of 256 characters", .tooLong(.operationID, maximum: 255)) {
            $0.operationID = String(repeating: "o", count: 256)
        },
        row("NUL in operation ID", .containsNUL(.operationID)) { $0.operationID = "op\u{0}1" },
        row("empty operation scope", .empty(.operationScope)) { $0.operationScope = "" },
        row("operation scope of 256 characters", .tooLong(.operationScope, maximum: 255)) {
            $0.operationScope = String(repeating: "s", count: 256)
        },
        row("NUL in operation scope", .containsNUL(.operationScope)) { $0.operationScope = "\u{0}" },
        row("empty draft ID", .empty(.draftID)) { $0.draftID = "" },
        row("draft ID of 256 characters", .tooLong(.draftID, maximum: 255)) {
            $0.draftID = String(repeating: "d", count: 256)
        },
        row("NUL in draft ID", .containsNUL(.draftID)) { $0.draftID = "draft\u{0}" },
        row("negative expected revision", .negativeExpectedRevision) { $0.expectedRevision = -1 },
        row("empty title", .empty(.title)) { $0.content.title = "" },
        row("title one character too long", .tooLong(.title, maximum: SaveLimits.maximumTitleLength)) {
            $0.content.title = String(repeating: "t", count: SaveLimits.maximumTitleLength + 1)
        },
        row("NUL in title", .containsNUL(.title)) { $0.content.title = "Ti\u{0}tle" },
        row("body one character too long", .tooLong(.body, maximum: SaveLimits.maximumBodyLength)) {
            $0.content.body = String(repeating: "b", count: SaveLimits.maximumBodyLength + 1)
        },
        row("NUL in body", .containsNUL(.body)) { $0.content.body = "\u{0}" },
        row("one tag too many", .tooManyTags(maximum: SaveLimits.maximumTagCount)) {
            $0.content.tags = (0...SaveLimits.maximumTagCount).map { "tag-\($0)" }
        },
        row("empty tag", .empty(.tag(index: 1))) { $0.content.tags = ["tag", ""] },
        row("tag one character too long", .tooLong(.tag(index: 0), maximum: SaveLimits.maximumTagLength)) {
            $0.content.tags = [String(repeating: "g", count: SaveLimits.maximumTagLength + 1)]
        },
        row("NUL in tag", .containsNUL(.tag(index: 0))) { $0.content.tags = ["t\u{0}g"] },
    ]

    private static func row(
        _ name: String,
        _ violation: SaveViolation,
        _ change: (inout SaveDraft) -> Void
    ) -> InvalidSaveRequest {
        var request = valid
        change(&request)
        return InvalidSaveRequest(name: name, request: request, violation: violation)
    }
}
