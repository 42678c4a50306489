/// The stable code of a save's outcome, as logs, metrics, the outcome log and JSON output spell it.
///
/// The raw values never change: dashboards and runbooks depend on them.
public enum SaveOutcome: String, Sendable, Hashable, CaseIterable {
    /// The conditional write applied, once.
    case committed
    /// The operation had already committed with the same request; its result was returned again.
    case replayed
    /// The expected revision was not the draft's current revision.
    case conflict
    /// The expected revision was above 0 and the draft does not exist.
    case notFound
    /// The request broke a limit; see ``SaveViolation``.
    case invalid
    /// The operation ID was already committed in its scope with a different request.
    case operationConflict
    /// The draft's revision is at `Int64.max`; it cannot take another save.
    case exhausted
    /// The save may or may not have committed; retry with the same operation ID.
    case outcomeUnknown

    /// The code as a string, identical to the raw value.
    public var code: String { rawValue }
}
