/// How a plan's backfill step converts rows that have only v1: in batches, until none remain.
///
/// The runner runs ``batch`` repeatedly, each time in its own transaction, and
/// asks ``remaining`` how many rows are still to convert; ``batchSize`` is the
/// most rows one batch should take.
public struct PlanBackfill: Sendable, Hashable {
    /// The file that converts one batch of rows.
    public let batch: PlanSQLFile

    /// The file whose query counts the rows still to convert.
    public let remaining: PlanSQLFile

    /// The most rows one batch converts: 1 to 1,000,000, 1,000 unless the manifest says otherwise.
    public let batchSize: Int
}
