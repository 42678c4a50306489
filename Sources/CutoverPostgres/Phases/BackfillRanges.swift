import Cutover
import PostgresClient

/// The key ranges a plan's parallel backfill divides its rows into (`cutover.backfill_ranges`):
/// each range's bounds, its own cursor, its rows converted, whether it is done, and the server
/// process of the worker that took it last.
///
/// A range runs from after its lower key (nil: the start of the table) up to and including its
/// upper key (nil: the end), so the ranges of a plan cover every key once, rows inserted since
/// they were made included. They are made once, when a backfill of several workers begins, and
/// kept until the backfill finishes (or the plan goes back to baseline), so that a run stopped,
/// killed or left by a worker goes on from each range's cursor, whatever number of workers
/// the next run has.
struct BackfillRanges {
    /// One range.
    struct Range: Sendable, Equatable {
        var number: Int
        /// The key the range starts after, as JSON text; nil from the start of the table.
        var lower: String?
        /// The last key of the range, as JSON text; nil to the end of the table.
        var upper: String?
        /// The last key a batch of this range converted; nil before the first.
        var cursor: String?
        var converted: Int64
        var isDone: Bool

        /// Where the range's next batch starts after.
        var resumeAfter: String? { cursor ?? lower }

        /// The keys of the range that batches have walked: all of it once done, up to its
        /// cursor before; nil before its first batch.
        var walkedBefore: BackfillEngine.KeySpan? {
            if isDone { return BackfillEngine.KeySpan(after: lower, upper: upper) }
            return cursor.map { BackfillEngine.KeySpan(after: lower, upper: $0) }
        }
    }

    let plan: String
    /// The plan's statement of range ends: `$1` the ranges wanted; at most `$1` - 1 ends.
    let splitSQL: String

    /// The ranges this run's workers are to convert: those an earlier run left unfinished, or,
    /// when the plan has none and `workers` is above 1, one for each worker, of about equal
    /// numbers of the rows still to convert as a sample of the table finds them, made in one
    /// transaction that also sets the plan's own cursor back to the start (a pass after the
    /// ranges walks from it). Empty when a single worker is to
    /// walk the table as a whole, or when a count found nothing to convert (`remaining` 0; nil
    /// when not counted).
    func prepare(workers: Int, remaining: Int64?, on connection: PostgresConnection,
                 log: (String) -> Void) throws -> [Range] {
        let existing = try Self.all(plan: plan, on: connection)
        if !existing.isEmpty {
            let undone = existing.filter { !$0.isDone }
            if !undone.isEmpty {
                log("backfill: going on with \(undone.count) of the \(existing.count) key ranges an earlier run began, each from its cursor")
            }
            return undone
        }
        guard workers > 1, remaining != 0 else { return [] }
        let ends = try connection.query(PostgresQuery(unsafeSQL: splitSQL, binds: [Int32(clamping: workers).postgresBind]))
            .map { try $0.decode(String.self, "upper_key") }
        var ranges: [Range] = []
        var lower: String?
        for end in ends + [nil] {
            ranges.append(Range(number: ranges.count, lower: lower, upper: end, cursor: nil, converted: 0, isDone: false))
            lower = end
        }
        try connection.withTransaction { connection in
            for range in ranges {
                try connection.query("""
                    INSERT INTO cutover.backfill_ranges (plan, range_no, lower_key, upper_key)
                    VALUES (\(plan), \(Int32(range.number)), \(range.lower), \(range.upper))
                    """)
            }
            try connection.query("UPDATE cutover.migration_state SET backfill_cursor = NULL, updated_at = now() WHERE plan = \(plan)")
        }
        return ranges
    }

    /// Every range of `plan`, in key order.
    static func all(plan: String, on connection: PostgresConnection) throws -> [Range] {
        try connection.query("""
            SELECT range_no, lower_key, upper_key, cursor_key, converted, is_done
              FROM cutover.backfill_ranges WHERE plan = \(plan) ORDER BY range_no
            """).map { row in
            Range(number: Int(try row.decode(Int32.self, "range_no")), lower: try row.decode(String?.self, "lower_key"),
                  upper: try row.decode(String?.self, "upper_key"), cursor: try row.decode(String?.self, "cursor_key"),
                  converted: try row.decode(Int64.self, "converted"), isDone: try row.decode(Bool.self, "is_done"))
        }
    }

    /// Records that the session's worker has taken range `number`.
    static func take(plan: String, range number: Int, on connection: PostgresConnection) throws {
        try connection.query("""
            UPDATE cutover.backfill_ranges SET worker_pid = pg_backend_pid(), updated_at = now()
             WHERE plan = \(plan) AND range_no = \(Int32(number))
            """)
    }

    /// A batch of range `number`, inside its transaction: the range's cursor moves to
    /// `lastKey` (the range is done when it is nil) and the plan's rows converted grow.
    static func record(plan: String, range number: Int, lastKey: String?, converted: Int64,
                       on connection: PostgresConnection) throws {
        try connection.query("""
            UPDATE cutover.backfill_ranges
               SET cursor_key = coalesce(\(lastKey), cursor_key), is_done = CAST(\(lastKey) AS text) IS NULL,
                   converted = converted + \(converted), updated_at = now()
             WHERE plan = \(plan) AND range_no = \(Int32(number))
            """)
        // Last, so that the plan's row, which every worker's batch updates, is held the least.
        try connection.query("""
            UPDATE cutover.migration_state SET backfill_converted = backfill_converted + \(converted), updated_at = now()
             WHERE plan = \(plan)
            """)
    }

    /// Forgets `plan`'s ranges: its backfill finished, or the plan went back to baseline.
    static func clear(plan: String, on connection: PostgresConnection) throws {
        try connection.query("DELETE FROM cutover.backfill_ranges WHERE plan = \(plan)")
    }
}
