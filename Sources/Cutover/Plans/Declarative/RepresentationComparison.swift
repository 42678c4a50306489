/// How `phase compare` reads a declarative plan's rows through both representations: the
/// query, and the columns it compares.
///
/// For each `alter_column`, every modern column is compared with what the plan's `up` makes of
/// the row (the legacy columns mapped forward), and every legacy column with what `down` makes
/// of it (the modern columns mapped back), with `IS DISTINCT FROM`, through the very row
/// functions the sync trigger and the backfill call. The operation's columns agree when one
/// side maps onto the other, as contract's check "representations agree" judges (`up` may lose
/// what a modern writer wrote, a name split in two, and then `down` holds); when neither does,
/// every column that differs is a disagreement. A row whose modern columns of an
/// `alter_column` are all still NULL while `up` gives a value is not converted yet: that
/// operation's columns are not compared, and the row is counted apart.
///
/// The query only reads. Its parameters: `$1` the sample size (NULL with ``query(sampling:)``
/// `false`: every row), `$2` whether values are returned (otherwise they stay on the server,
/// NULL), `$3` whether keys are returned hashed instead of as text, `$4` how many disagreeing
/// rows are listed, and, when sampling, `$5` the percentage of the table's pages read
/// (`TABLESAMPLE SYSTEM`, from which `$1` rows are drawn at random), so that a sample of a large
/// table reads a part of it; ``samplePercentage(sample:estimatedRows:)`` gives it. Its first row (`listed` false) holds the counts `sampled`,
/// `not_converted`, `disagreeing_rows` and `disagreements`; each further row is one column of
/// one disagreeing row, in key order: `key_0` … (the key's columns as text), `key_hash`,
/// `column_name`, `direction` (`up` or `down`), `expected` and `stored`.
public struct RepresentationComparison: Sendable, Hashable {
    /// One compared column.
    public struct Column: Sendable, Hashable {
        /// Which way the plan maps the value the column is compared with.
        public enum Direction: String, Sendable, Hashable, CaseIterable {
            /// A modern column against `up` of the row: what the legacy columns say.
            case up
            /// A legacy column against `down` of the row: what the modern columns say.
            case down
        }
        /// The column's name.
        public let name: String
        /// Which expression its value is compared with.
        public let direction: Direction
    }

    /// The table compared.
    public let table: QualifiedName
    /// The key's columns, in the plan's order.
    public let key: [String]
    /// The columns compared, in plan order: each operation's modern columns, then its legacy ones.
    public let columns: [Column]
    let sampledSQL: String
    let everyRowSQL: String

    /// The query over a random sample of `$1` rows when `sampling`, or over every row.
    public func query(sampling: Bool) -> String {
        sampling ? sampledSQL : everyRowSQL
    }

    /// The share of the table's pages to read for a sample of `sample` rows, as a percentage:
    /// ten times what the table's estimated row count (`pg_class.reltuples`) calls for, since
    /// pages hold rows unevenly and the estimate may be old; every page when the table is small
    /// or has no estimate (a negative or zero count).
    public static func samplePercentage(sample: Int, estimatedRows: Double) -> Double {
        guard estimatedRows > 0 else { return 100 }
        return min(100, 100 * 10 * Double(sample) / estimatedRows)
    }

    /// How ``query(sampling:)`` hashes a key when asked to: the first 16 hex digits of the
    /// SHA-256 of the key's columns as a JSON array, as this SQL computes it over the table's
    /// columns, so that an operator can find the row: `left(encode(sha256(convert_to(jsonb_build_array(id)::text, 'UTF8')), 'hex'), 16)`.
    public var keyHashSQL: String { PlanCompiler.keyHash(key.map(SQLName.identifier)) }
}

extension CompiledPlan {
    /// How `phase compare` reads the plan's rows through both representations; nil when the
    /// plan keeps no column in two representations (it has no `alter_column`).
    public var representationComparison: RepresentationComparison? {
        PlanCompiler(declaration).representationComparison()
    }
}
