/// A precondition of a plan step: a query whose one value must meet an expectation before the step runs.
///
/// In a manifest:
///
/// ```json
/// {"name": "no v1-only rows", "sqlFile": "checks/v1_only.sql", "expect": "= 0",
///  "message": "backfill must finish first"}
/// ```
public struct PlanCheck: Sendable, Hashable {
    /// Where a check's query comes from.
    public enum Query: Sendable, Hashable {
        /// SQL written in the manifest's `sql` key.
        case inline(String)
        /// A file named by the manifest's `sqlFile` key, relative to the plan folder.
        case file(path: String)
    }

    /// The check's name, unique within its step, as refusals name it.
    public let name: String

    /// The query that returns the observed value.
    public let query: Query

    /// What the observed value must meet.
    public let expectation: CheckExpectation

    /// What the operator should know or do when the check fails.
    public let message: String
}
