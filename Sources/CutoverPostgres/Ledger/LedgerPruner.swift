import Foundation
import PostgresClient

/// Deletes ledger entries older than the retention, in small batches.
///
/// Each batch is its own short transaction that deletes at most ``batchSize`` of the oldest
/// expired entries, skipping any row another transaction holds, so no save waits on the pruner
/// for longer than one batch, and an interrupted prune is resumed simply by running it again.
/// The cut-off is fixed when the prune starts.
///
/// After an entry is pruned its operation ID is new again: a retry that arrives after the
/// retention period commits as a new operation. Keep the retention longer than any client
/// retries.
///
/// ```swift
/// let report = try await LedgerPruner(pool: pool).prune()
/// print("\(report.deleted) entries in \(report.batches) batches")
/// ```
public struct LedgerPruner: Sendable {
    /// Entries younger than this are never pruned, whatever is asked.
    public static let minimumRetention: Duration = .seconds(24 * 3600)
    /// Entries are kept at most this long, ten years: a bound far beyond any client's retries,
    /// so that no retention asked for reaches the server as an out-of-range timestamp.
    public static let maximumRetention: Duration = .seconds(3650 * 24 * 3600)
    /// The default retention: seven days.
    public static let defaultRetention: Duration = .seconds(7 * 24 * 3600)

    /// What a prune did.
    public struct Report: Sendable, Equatable {
        /// Entries deleted.
        public var deleted: Int
        /// Batches run, the last one possibly short or empty.
        public var batches: Int
        /// Whether every expired entry is gone (false when stopped by `maximumBatches`).
        public var isComplete: Bool

        /// A report of `deleted` entries in `batches` batches.
        public init(deleted: Int, batches: Int, isComplete: Bool) {
            self.deleted = deleted
            self.batches = batches
            self.isComplete = isComplete
        }
    }

    /// The pool to prune through.
    public let pool: PostgresPool
    /// Entries per batch.
    public let batchSize: Int

    /// A pruner deleting at most `batchSize` entries per transaction.
    public init(pool: PostgresPool, batchSize: Int = 1000) {
        precondition(batchSize > 0, "a batch holds at least one entry")
        self.pool = pool
        self.batchSize = batchSize
    }

    /// Deletes entries committed longer than `retention` ago, of every plan or of `plan` only.
    ///
    /// - Parameters:
    ///   - plan: the plan whose entries to prune; nil prunes every plan's.
    ///   - maximumBatches: stop after this many batches (the rest is left for a later run).
    ///   - progress: called after each batch with the running total deleted.
    /// - Throws: ``LedgerPruneError/retentionTooShort(_:)`` below ``minimumRetention``.
    public func prune(olderThan retention: Duration = defaultRetention, plan: String? = nil, maximumBatches: Int? = nil,
                      progress: (@Sendable (Int) -> Void)? = nil) async throws -> Report {
        guard retention >= Self.minimumRetention else { throw LedgerPruneError.retentionTooShort(retention) }
        guard retention <= Self.maximumRetention else { throw LedgerPruneError.retentionTooLong(retention) }
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        let cutoff = try await pool.withConnection { connection in
            try connection.query("SELECT now() - make_interval(secs => \(seconds)) AS cutoff")[0].decode(Date.self, "cutoff")
        }
        var report = Report(deleted: 0, batches: 0, isComplete: false)
        while maximumBatches.map({ report.batches < $0 }) ?? true {
            let limit = batchSize
            let deleted = try await pool.withConnection { connection in
                try connection.query("""
                    WITH expired AS (
                        SELECT plan, scope, operation_id FROM cutover.operation_ledger
                         WHERE committed_at < \(cutoff) AND (\(plan)::text IS NULL OR plan = \(plan))
                         ORDER BY committed_at
                         LIMIT \(limit)
                           FOR UPDATE SKIP LOCKED)
                    DELETE FROM cutover.operation_ledger l USING expired e
                     WHERE l.plan = e.plan AND l.scope = e.scope AND l.operation_id = e.operation_id
                    """).affectedRows ?? 0
            }
            report.batches += 1
            report.deleted += deleted
            progress?(report.deleted)
            if deleted < batchSize {
                report.isComplete = true
                break
            }
        }
        return report
    }
}

/// A prune that was refused.
public enum LedgerPruneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The retention asked for is below ``LedgerPruner/minimumRetention``.
    case retentionTooShort(Duration)
    /// The retention asked for is above ``LedgerPruner/maximumRetention``.
    case retentionTooLong(Duration)

    public var description: String {
        switch self {
        case .retentionTooShort(let retention):
            "a ledger retention of \(retention) is refused: it must be at least 24 hours, longer than any client retries"
        case .retentionTooLong(let retention):
            "a ledger retention of \(retention) is refused: it must be at most 3650 days"
        }
    }
}
