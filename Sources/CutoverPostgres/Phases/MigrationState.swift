import Cutover
import Foundation
import PostgresClient

/// Where a plan's migration stands, as `cutover.migration_state` records it.
public struct MigrationState: Sendable, Equatable {
    /// The plan's name.
    public var plan: String
    /// The current phase.
    public var phase: MigrationPhase
    /// The writer path the fleet should use.
    public var writerPath: SavePath
    /// Grows by one with every change of phase or writer path.
    public var epoch: Int64
    /// When the writer path last changed.
    public var writerSwitchedAt: Date?
    /// The last key a backfill batch committed, nil before the first or after a finished pass.
    public var backfillCursor: String?
    /// Rows converted by backfill so far.
    public var backfillConverted: Int64
    /// Rows the backfill had to convert when its first run began (those converted before it
    /// plus those left), nil before it began.
    public var backfillInitialRemaining: Int64? = nil

    /// Rows that the application's own writes converted (or deleted) since the backfill began,
    /// when `remaining` rows are still to convert: what the backfill had to convert then, less
    /// what it converted and what is left. Zero before the backfill began.
    ///
    /// A legacy writer's update is mirrored by the expand trigger and a modern writer writes both
    /// representations, so either converts the row before the backfill reaches it; a row
    /// inserted since then was never among those to convert.
    public func convertedByApplication(remaining: Int64) -> Int64 {
        guard let initial = backfillInitialRemaining else { return 0 }
        return max(0, initial - backfillConverted - remaining)
    }

    /// The state of `plan`, or nil when `phase init` has not created it.
    public static func load(plan: String, on connection: PostgresConnection) throws -> MigrationState? {
        let rows = try connection.query("""
            SELECT phase, writer_path, epoch, writer_switched_at, backfill_cursor, backfill_converted, backfill_initial_remaining
              FROM cutover.migration_state WHERE plan = \(plan)
            """)
        guard let row = rows.first else { return nil }
        let phaseName = try row.decode(String.self, "phase")
        let pathName = try row.decode(String.self, "writer_path")
        guard let phase = MigrationPhase(rawValue: phaseName), let path = SavePath(rawValue: pathName) else {
            throw PostgresError(code: .unexpectedResponse,
                                message: "cutover.migration_state for plan \(plan) holds an unknown phase or path")
        }
        return MigrationState(plan: plan, phase: phase, writerPath: path, epoch: try row.decode(Int64.self, "epoch"),
                              writerSwitchedAt: try row.decode(Date?.self, "writer_switched_at"),
                              backfillCursor: try row.decode(String?.self, "backfill_cursor"),
                              backfillConverted: try row.decode(Int64.self, "backfill_converted"),
                              backfillInitialRemaining: try row.decode(Int64?.self, "backfill_initial_remaining"))
    }

    /// Creates the state row of `plan` at baseline if it has none; true when it was created.
    @discardableResult
    public static func create(plan: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("""
            INSERT INTO cutover.migration_state (plan) VALUES (\(plan)) ON CONFLICT (plan) DO NOTHING
            """).affectedRows == 1
    }

    /// Moves `plan` from `phase` at `epoch` to `target` with the target's writer path, one
    /// epoch on, inside the caller's transaction.
    ///
    /// A compare-and-set: when the state is no longer at that phase and epoch (another runner,
    /// or an earlier attempt whose reply was lost, moved it), nothing changes and
    /// ``PhaseRunnerError/stateMoved(plan:from:epoch:)`` is thrown, so that the caller's
    /// transaction rolls back with everything it did. A change of writer path is announced on
    /// ``notificationChannel`` in the same transaction, so listeners hear of it exactly when it
    /// commits.
    ///
    /// - Returns: the new epoch.
    @discardableResult
    static func advance(plan: String, from phase: MigrationPhase, epoch: Int64, to target: MigrationPhase,
                        on connection: PostgresConnection) throws -> Int64 {
        let path = target.writerPath.rawValue
        let rows = try connection.query("""
            UPDATE cutover.migration_state
               SET phase = \(target.rawValue), epoch = epoch + 1, updated_at = now(),
                   writer_switched_at = CASE WHEN writer_path <> \(path) THEN now() ELSE writer_switched_at END,
                   writer_path = \(path),
                   backfill_cursor = CASE WHEN \(target.rawValue) = 'baseline' THEN NULL ELSE backfill_cursor END,
                   backfill_converted = CASE WHEN \(target.rawValue) = 'baseline' THEN 0 ELSE backfill_converted END,
                   backfill_initial_remaining = CASE WHEN \(target.rawValue) = 'baseline' THEN NULL
                                                     ELSE backfill_initial_remaining END
             WHERE plan = \(plan) AND phase = \(phase.rawValue) AND epoch = \(epoch)
            RETURNING epoch
            """)
        guard let row = rows.first else { throw PhaseRunnerError.stateMoved(plan: plan, from: phase, epoch: epoch) }
        let newEpoch = try row.decode(Int64.self, "epoch")
        if target == .baseline { try BackfillRanges.clear(plan: plan, on: connection) }
        try connection.query("""
            SELECT pg_notify(\(notificationChannel), json_build_object('plan', \(plan)::text, 'writerPath', \(path)::text,
                                                                       'epoch', \(newEpoch), 'phase', \(target.rawValue)::text)::text)
            """)
        return newEpoch
    }

    /// The channel on which every change of a plan's state is announced.
    public static let notificationChannel = "cutover_state"
}
