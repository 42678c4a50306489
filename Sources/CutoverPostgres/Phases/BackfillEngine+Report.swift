import Cutover
import PostgresClient

extension BackfillEngine {
    /// The run's progress and pace, with the batch about to run counted, as the history row's
    /// `details.backfill` holds it; its rows converted are added when the batch commits.
    struct Report {
        let attempt: Int64
        let progress: Progress
        let elapsed: Duration
    }

    /// Writes the run's progress and pace into its history row, for `phase status` from another
    /// terminal and for the history; `converted` rows of the batch in flight are added.
    ///
    /// `updatedAt` moves only when the report `recordsBatch` (or is the run's first); while the
    /// progress has a ``Progress/holdReason``, `heldSince` is when the backfill began to be held,
    /// kept from the report before for as long as it stays held.
    func write(_ report: Report, converted: Int64, batchSize: Int64, recordsBatch: Bool, on connection: PostgresConnection) throws {
        let progress = report.progress
        let milliseconds = { (duration: Duration) in DurationText.milliseconds(in: duration) }
        let elapsed = milliseconds(report.elapsed)
        // Up to the start of this batch: its own rows are in `converted`, its time not yet in `elapsed`.
        let rate = elapsed > 0 ? Int64((Double(progress.convertedThisRun) * 1000 / Double(elapsed)).rounded()) : 0
        try connection.query("""
            UPDATE cutover.phase_history
               SET details = details || jsonb_build_object('backfill', jsonb_build_object(
                       'converted', \(progress.converted + converted), 'convertedBefore', \(progress.convertedBefore),
                       'total', CAST(\(progress.total) AS bigint),
                       'convertedByApplication', CAST(\(progress.total.map { _ in progress.convertedByApplication }) AS bigint),
                       'batches', \(Int64(progress.batches)), 'batchSize', \(batchSize), 'workers', \(Int64(progress.workers)),
                       'targetBatchMs', \(milliseconds(progress.targetBatchTime)), 'niceRatio', \(progress.niceRatio),
                       'rowsPerSecond', \(rate), 'elapsedMs', \(elapsed), 'throttledMs', \(milliseconds(progress.throttled)),
                       'pausedMs', \(milliseconds(progress.pausedByOperator)), 'replicaWaitedMs', \(milliseconds(progress.replicaWaited)),
                       'lastThrottleReason', CAST(\(progress.lastThrottleReason) AS text),
                       'holdReason', CAST(\(progress.holdReason) AS text),
                       'heldSince', CASE WHEN CAST(\(progress.holdReason) AS text) IS NULL THEN NULL
                                         ELSE coalesce(nullif(details #> '{backfill,heldSince}', 'null'), to_jsonb(clock_timestamp())) END,
                       'updatedAt', CASE WHEN CAST(\(recordsBatch) AS boolean) THEN to_jsonb(clock_timestamp())
                                         ELSE coalesce(details #> '{backfill,updatedAt}', to_jsonb(clock_timestamp())) END))
             WHERE id = \(report.attempt)
            """)
    }
}
