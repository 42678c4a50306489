import Foundation

/// A backfill run's progress and pace as it records them with every batch, and when a hold
/// begins and ends, in its history row's `details.backfill`: what `phase status` shows of a
/// backfill running in another terminal, and what `phase history` keeps of the pace a finished
/// one kept. With several workers, the figures are the whole backfill's: one batch size, and
/// each hold's time counted once.
public struct BackfillRunReport: Sendable, Equatable, Decodable {
    /// Rows converted, over every run.
    public var converted: Int64
    /// Rows converted before this run began.
    public var convertedBefore: Int64
    /// Rows converted plus rows still to convert when the run began (or its last pass ended);
    /// nil while a table too large to count before the first batch is being counted.
    public var total: Int64?
    /// Rows the application's own writes converted since the backfill began, as of the same
    /// moment; nil in a report written before Cutover counted them.
    public var convertedByApplication: Int64?
    /// Batches run.
    public var batches: Int
    /// Workers converting at once; nil in a report written before Cutover had workers.
    public var workers: Int?
    /// Rows of the last batch.
    public var batchSize: Int
    /// The target batch time the size followed, in milliseconds (0: fixed batches).
    public var targetBatchMs: Int64
    /// The nice ratio the batches rested by.
    public var niceRatio: Double
    /// Rows this run converted per second so far.
    public var rowsPerSecond: Int64
    /// Time since the run began, in milliseconds, when the last batch started.
    public var elapsedMs: Int64
    /// Time the throttle held batches, in milliseconds.
    public var throttledMs: Int64
    /// Time an operator's pause held them, in milliseconds.
    public var pausedMs: Int64
    /// Time spent waiting for standbys, in milliseconds.
    public var replicaWaitedMs: Int64
    /// Why the throttle last held the backfill.
    public var lastThrottleReason: String?
    /// What holds the backfill before its next batch as the report was written (the throttle's
    /// reason, or a standby's replay lag over the ceiling); nil while nothing does.
    public var holdReason: String?
    /// When that hold began, as the server gave it.
    public var heldSince: String?
    /// When the last batch committed, as the server gave it; before the first, when the run
    /// first wrote its report.
    public var updatedAt: String

    /// Rows this run converted.
    public var convertedThisRun: Int64 { converted - convertedBefore }

    /// `400 of 1000 rows converted`, or `400 rows converted` while the total is not counted.
    public static func rowsConverted(_ converted: Int64, of total: Int64?) -> String {
        "\(converted)\(total.map { " of \($0)" } ?? "") rows converted"
    }

    /// The seconds left at this run's rate, nil before it has one.
    public var secondsLeft: Int64? {
        guard rowsPerSecond > 0, let total, total > converted else { return nil }
        return (total - converted + rowsPerSecond - 1) / rowsPerSecond
    }

    /// The report in a history row's `details`, nil when it holds none.
    public static func from(details: String) -> BackfillRunReport? {
        struct Details: Decodable { var backfill: BackfillRunReport? }
        return (try? JSONDecoder().decode(Details.self, from: Data(details.utf8)))?.backfill
    }
}
