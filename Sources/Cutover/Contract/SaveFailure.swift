/// Why a save did not commit, or why its outcome is unknown.
///
/// Each case has a one-line ``description`` and a stable ``outcome`` code.
/// Descriptions name limits and revisions, never the request's content.
public enum SaveFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request broke a limit of ``SaveLimits``; nothing was recorded, so the operation ID stays free.
    case invalid(SaveViolation)

    /// The record's revision is not the expected one (or the record exists and 0 was expected).
    case conflict(expected: Int64, current: Int64)

    /// The expected revision is above 0 and the record does not exist.
    case notFound

    /// The operation ID was already committed in its scope with a different request.
    case operationConflict

    /// The record's revision is already `Int64.max`.
    case exhausted

    /// The connection or server was lost around the commit: retry with the same operation ID.
    case outcomeUnknown

    /// The stable outcome code of this failure.
    public var outcome: SaveOutcome {
        switch self {
        case .invalid: .invalid
        case .conflict: .conflict
        case .notFound: .notFound
        case .operationConflict: .operationConflict
        case .exhausted: .exhausted
        case .outcomeUnknown: .outcomeUnknown
        }
    }

    /// One line saying what happened and what to do.
    public var description: String {
        switch self {
        case .invalid(let violation):
            "invalid save request: \(violation)"
        case .conflict(let expected, let current):
            "revision conflict: expected revision \(expected), current revision \(current); re-read the record"
        case .notFound:
            "record not found: the expected revision is above 0 but the record does not exist"
        case .operationConflict:
            "operation conflict: this operation ID was already committed in its scope with a different request"
        case .exhausted:
            "revision exhausted: the record is at revision Int64.max and cannot be saved again"
        case .outcomeUnknown:
            "outcome unknown: the save may have committed; retry with the same operation ID"
        }
    }
}
