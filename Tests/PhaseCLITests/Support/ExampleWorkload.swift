import Foundation
import Testing

/// One example plan of `examples/` with what an old and a new application send to its table,
/// and the test's own SQL for judging the rows: none of it calls what the plan generates.
///
/// Keys are split in ranges so that every row says who wrote it: the seeds are `1…rows`, the
/// old writer's inserts take keys from the sequence `legacy_keys` (from 1 000 001) and the new
/// writer's from `modern_keys` (from 2 000 001). The old writer updates, upserts and deletes
/// seeds only; the new writer inserts rows whose values follow from their key, and updates
/// seeds while pgbench's variable `seeds` is 1.
struct ExampleWorkload: Sendable, CustomTestStringConvertible {
    /// The folder under `examples/`.
    let folder: String
    /// The table, as SQL.
    let table: String
    let keyColumns: [String]
    /// The columns contract drops, and those it makes NOT NULL.
    let legacyColumns: [String]
    let modernColumns: [String]
    /// Inserts the seeds `1…rows`; `ROWS` stands for their count.
    let seed: String
    /// pgbench scripts, with the variables `rows` and (modern) `seeds`.
    let legacyScript: String
    let modernScript: String
    /// True for a row whose two representations agree, or that is not converted yet.
    let agrees: String
    /// True for a row not converted yet.
    let unconverted: String
    /// The reference's column `expected`, from the legacy columns, read before contract.
    let expected: String
    /// After contract, over `t` (the table) and `r` (the reference): a row the reference holds
    /// is right; and a row the new writer inserted during contract is right.
    let keptRowIsRight: String
    let newRowIsRight: String
    /// The old writer's rows, and the new writer's.
    let legacyRows: String
    let modernRows: String
    /// After a rollback: the legacy columns of a row the new writer inserted hold what its key says.
    let modernRowRolledBack: String

    var testDescription: String { folder }

    /// How many seed rows each test starts with: more than one backfill batch.
    static let rows = 2500

    /// The plan folder in the source tree.
    var path: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/\(folder)").path
    }

    /// The key sequences and the seeds.
    var setup: String {
        """
        CREATE SEQUENCE legacy_keys START 1000001;
        CREATE SEQUENCE modern_keys START 2000001;
        \(seed.replacing("ROWS", with: String(Self.rows)))
        """
    }

    /// The number of rows whose representations disagree.
    var disagreeing: String { "SELECT count(*) FROM \(table) WHERE NOT coalesce((\(agrees)), false)" }

    /// The number of rows not converted.
    var unconvertedCount: String { "SELECT count(*) FROM \(table) WHERE \(unconverted)" }

    /// Stores the reference: every row's key and `expected`.
    var storeReference: String {
        "CREATE TABLE cutover_reference AS SELECT \(keyColumns.joined(separator: ", ")), \(expected) AS expected FROM \(table)"
    }

    /// After contract, the rows that differ from the reference (lost ones included) or, new
    /// since, from what their key says.
    var wrongAfterContract: String {
        let first = keyColumns[0]
        let join = keyColumns.map { "t.\($0) = r.\($0)" }.joined(separator: " AND ")
        return """
            SELECT count(*) FROM \(table) AS t FULL JOIN cutover_reference AS r ON \(join)
             WHERE t.\(first) IS NULL
                OR (r.\(first) IS NULL AND NOT coalesce((\(newRowIsRight)), false))
                OR (r.\(first) IS NOT NULL AND NOT coalesce((\(keptRowIsRight)), false))
            """
    }

    /// The old writer's rows, against how many keys it took (it inserts one row per key, and
    /// deletes none of its own).
    var legacyRowsMissing: String {
        """
        SELECT (SELECT CASE WHEN is_called THEN last_value - 1000000 ELSE 0 END FROM legacy_keys)
             - (SELECT count(*) FROM \(table) WHERE \(legacyRows))
        """
    }

    /// The new writer's rows, and those among them whose legacy columns are wrong.
    var modernRowsRolledBack: String {
        "SELECT count(*), count(*) FILTER (WHERE NOT coalesce((\(modernRowRolledBack)), false)) FROM \(table) WHERE \(modernRows)"
    }

    /// The table's shape: columns, indexes, constraints, triggers, and every function outside
    /// PostgreSQL's own schemas, one line each.
    var shape: String {
        let table = "to_regclass('\(table)')"
        return """
            SELECT 'column ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                   || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') AS line
              FROM pg_attribute AS a LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
             WHERE a.attrelid = \(table) AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = \(table)
            UNION ALL SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = \(table)
            UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE tgrelid = \(table) AND NOT tgisinternal
            UNION ALL SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
             WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
            ORDER BY 1
            """
    }

    /// After contract: how many legacy columns are left, and how many modern ones may hold NULL.
    var contractedShape: String {
        let quoted = { (names: [String]) in names.map { "'\($0)'" }.joined(separator: ", ") }
        return """
            SELECT count(*) FILTER (WHERE attname IN (\(legacyColumns.isEmpty ? "NULL" : quoted(legacyColumns)))),
                   count(*) FILTER (WHERE attname IN (\(quoted(modernColumns))) AND NOT attnotnull)
              FROM pg_attribute WHERE attrelid = to_regclass('\(table)') AND attnum > 0 AND NOT attisdropped
            """
    }
}
