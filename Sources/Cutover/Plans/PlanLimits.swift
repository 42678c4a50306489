/// The bounds a plan manifest must stay within, so hostile or mistaken input is refused early and cheaply.
///
/// Lengths count Unicode scalar values, as ``SaveLimits`` does, except the table
/// name, which counts UTF-8 bytes because PostgreSQL truncates identifiers past
/// 63 bytes instead of refusing them.
public enum PlanLimits {
    /// The manifest format of a plan of SQL files (``MigrationPlan``).
    public static let format = 1

    /// The manifest format of a declarative plan (``DeclarativePlan``).
    public static let declarativeFormat = 2

    /// Every manifest format this version reads.
    public static let formats = [format, declarativeFormat]

    /// UTF-8 bytes allowed in a column, index, constraint or schema name: PostgreSQL's identifier limit.
    public static let identifierByteCount: ClosedRange<Int> = 1...63

    /// Columns allowed in a declarative plan's key.
    public static let keyColumnCount: ClosedRange<Int> = 1...32

    /// Characters allowed in a declarative plan's expression or column type.
    public static let expressionLength: ClosedRange<Int> = 1...8_192

    /// The modern writer window of a declarative plan that names none: 10 minutes.
    public static let defaultModernWriterWindow: Duration = .seconds(600)
    /// The `application_name` pattern of legacy sessions a declarative plan assumes when it
    /// names none, so that contract's "no legacy session connected" is never skipped by omission.
    public static let defaultLegacyApplicationPattern = "legacy-%"

    /// The largest manifest accepted, in bytes: 1 MiB.
    public static let maximumManifestByteCount = 1 << 20

    /// Characters allowed in the plan's name and in each check's name.
    public static let nameLength: ClosedRange<Int> = 1...128

    /// UTF-8 bytes allowed in the table name: PostgreSQL's identifier limit.
    public static let tableNameByteCount: ClosedRange<Int> = 1...63

    /// Characters allowed in the legacy application pattern, a `LIKE` pattern over `application_name`.
    public static let legacyApplicationPatternLength: ClosedRange<Int> = 1...256

    /// The longest `modernWriterWindow` accepted: 366 days.
    public static let maximumModernWriterWindow: Duration = .seconds(366 * 86_400)

    /// The most entries in any list of the manifest: steps, SQL files, checks.
    public static let maximumListCount = 64

    /// Characters allowed in a SQL file's path, relative to the plan folder.
    public static let pathLength: ClosedRange<Int> = 1...255

    /// Characters allowed in a check's inline SQL; longer checks belong in a file.
    public static let inlineSQLLength: ClosedRange<Int> = 1...8_192

    /// Characters allowed in a check's expectation, such as `= 0`.
    public static let expectationLength: ClosedRange<Int> = 1...256

    /// Characters allowed in a SQL file's `serverVersion`, such as `>= 18`.
    public static let serverVersionLength: ClosedRange<Int> = 1...16

    /// Characters allowed in a check's message.
    public static let checkMessageLength: ClosedRange<Int> = 1...1_024

    /// Rows a backfill batch may be asked to convert.
    public static let batchSize: ClosedRange<Int> = 1...1_000_000

    /// The batch size when the backfill step names none.
    public static let defaultBatchSize = 1_000

    /// A backfill's nice ratio: its pause after each batch, as a fraction of the batch's time.
    public static let niceRatio: ClosedRange<Double> = 0...100

    /// The nice ratio when the backfill step names none: no pause.
    public static let defaultNiceRatio = 0.0

    /// The standby replay lag a backfill batch may start with when the backfill step names
    /// none: 10 s, a third of PostgreSQL's default `max_standby_streaming_delay`, so that a
    /// standby query that conflicts with replay keeps most of its grace.
    public static let defaultMaximumReplicaLag: Duration = .seconds(10)

    /// The time a backfill batch should take when the plan names none: 50 ms, long enough
    /// that a batch's own cost (its transaction, its commit, its cursor) is small beside its
    /// rows, short enough that the application's writes to the rows it locks wait little. A
    /// batch holds every row it converted until it commits, so the rows it holds grow with the
    /// backfill's speed: at 250 ms a fast backfill held more than 1% of a 1,000,000-row table
    /// at a time and the live saves' p99 rose 17-fold; at 50 ms it rose 1.9-fold for 0.79× of
    /// the throughput of one set-based UPDATE (docs/BENCHMARKS.md).
    public static let defaultTargetBatchTime: Duration = .milliseconds(50)

    /// The longest target a backfill batch may be given: 60 s.
    public static let maximumTargetBatchTime: Duration = .seconds(60)

    /// A backfill's ceiling on the database's active sessions.
    public static let activeSessions: ClosedRange<Int> = 1...100_000
}
