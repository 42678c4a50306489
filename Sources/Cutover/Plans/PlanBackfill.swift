/// How a plan's backfill step converts rows that have only v1: in batches, until none remain.
///
/// The runner runs ``batch`` repeatedly, each time in its own transaction, and
/// asks ``remaining`` how many rows are still to convert; ``batchSize`` is the
/// most rows one batch should take, and ``niceRatio`` how long to rest after each one.
public struct PlanBackfill: Sendable, Hashable {
    /// The file that converts one batch of rows.
    public let batch: PlanSQLFile

    /// The file whose query counts the rows still to convert.
    public let remaining: PlanSQLFile

    /// The most rows one batch converts: 1 to 1,000,000, 1,000 unless the manifest says otherwise.
    public let batchSize: Int

    /// The pause after each batch, as a fraction of the batch's own time: 0 to 100, 0 unless
    /// the manifest says otherwise. 0.25 rests a quarter of each batch's time, so the backfill
    /// takes about 1.25 times as long and leaves that room to the live load.
    public let niceRatio: Double

    /// The most replay lag a standby may have when a batch starts: `maxReplicaLag`, a duration
    /// like `"10s"`, 10 s unless the manifest says otherwise (see ``PlanLimits/defaultMaximumReplicaLag``).
    public let maximumReplicaLag: Duration

    /// The time each batch should take, and when the backfill waits: `targetBatchTime`,
    /// `maxActiveSessions` and `throttleQuery`, ``PlanBackfillThrottle/standard`` unless the
    /// manifest says otherwise.
    public var throttle: PlanBackfillThrottle = .standard

    /// The file whose query divides the rows still to convert into key ranges for parallel
    /// workers, nil when the plan has none: a plan of SQL files (format 1), whose hand-written
    /// batch takes no end of range. A plan with one has a batch whose `$3` is the range's last key.
    public var split: PlanSQLFile? = nil

    /// The file of a batch that updates its rows directly, locking each as it reaches it, nil
    /// when the plan has none: a plan of SQL files, or one with nothing to backfill. It takes
    /// ``batch``'s parameters and returns its columns, and waits for a row another transaction
    /// holds where ``batch`` skips it; the backfill runs it under a short lock timeout and runs
    /// ``batch`` in its place for a batch whose wait runs out.
    public var directBatch: PlanSQLFile? = nil
}
