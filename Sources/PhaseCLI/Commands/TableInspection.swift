import Cutover
import PostgresClient

/// What `phase new` learns of a table from the catalog: where it is, its columns, and the
/// unique key a backfill can walk.
struct TableInspection: Sendable, Equatable {
    /// A column of the table.
    struct Column: Sendable, Equatable {
        let name: String
        /// Its type as `format_type` writes it: `bigint`, `character varying(255)`.
        let type: String
        let isNotNull: Bool
    }

    /// The unique key chosen for the backfill.
    struct Key: Sendable, Equatable {
        /// The columns, in the index's order.
        let columns: [String]
        /// The index it comes from.
        let index: String
        /// Whether it is the primary key; otherwise a unique index over NOT NULL columns.
        let isPrimary: Bool
    }

    let schema: String
    let name: String
    let columns: [Column]
    let key: Key

    /// The most columns a plan's key may have.
    static let maximumKeyColumns = 32

    /// Inspects `table` (`name` found on the session's `search_path`, or `schema.name`), or
    /// refuses, exit 3, naming what is missing: no such table, not a plain table, no usable key.
    static func inspect(_ table: QualifiedName, on connection: PostgresConnection) throws -> TableInspection {
        let (schema, name) = (table.schema, table.name)
        let shown = table.sql
        let found = try schema.map { schema in
            try connection.query("""
                SELECT c.oid::bigint AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind
                  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                 WHERE n.nspname = \(schema) AND c.relname = \(name)
                """)
        } ?? connection.query("""
            SELECT c.oid::bigint AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind
              FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
             WHERE c.oid = to_regclass(quote_ident(\(name)))
            """)
        guard let table = found.first else {
            throw CommandFailure("no table \(shown) in this database"
                                 + (schema == nil ? " on the search_path (give it as schema.name)" : ""), exitCode: .refused)
        }
        let oid = try table.decode(Int64.self, "oid")
        let kind = try table.decode(String.self, "kind")
        let tableSchema = try table.decode(String.self, "schema")
        let tableName = try table.decode(String.self, "name")
        switch kind {
        case "r": break
        case "p":
            throw CommandFailure("\(shown) is a partitioned table: expand builds its indexes CONCURRENTLY, which a partitioned table does not allow",
                                 exitCode: .refused)
        default:
            throw CommandFailure("\(shown) is not a table (relkind \(kind)): a plan migrates a table's rows", exitCode: .refused)
        }
        let columns = try connection.query("""
            SELECT a.attname::text AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
              FROM pg_attribute AS a
             WHERE a.attrelid = CAST(\(oid) AS bigint)::oid AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum
            """).map { Column(name: try $0.decode(String.self, "name"), type: try $0.decode(String.self, "type"),
                              isNotNull: try $0.decode(Bool.self, "not_null")) }
        guard let key = try key(of: oid, on: connection) else {
            throw CommandFailure("\(shown) has no primary key and no unique index over NOT NULL columns, and the backfill walks the rows "
                                 + "in the order of one: add one (CREATE UNIQUE INDEX CONCURRENTLY) and run phase new again", exitCode: .refused)
        }
        return TableInspection(schema: tableSchema, name: tableName, columns: columns, key: key)
    }

    /// The primary key, else the unique index over the fewest NOT NULL columns (by name when
    /// several tie); only valid indexes over plain columns, without a predicate, count.
    private static func key(of oid: Int64, on connection: PostgresConnection) throws -> Key? {
        let rows = try connection.query("""
            SELECT ic.relname::text AS index_name, i.indisprimary AS is_primary, a.attname::text AS column_name,
                   a.attnotnull AS not_null
              FROM pg_index AS i
              JOIN pg_class AS ic ON ic.oid = i.indexrelid
             CROSS JOIN LATERAL unnest(CAST(i.indkey AS int2[])) WITH ORDINALITY AS k(attnum, position)
              JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE i.indrelid = CAST(\(oid) AS bigint)::oid AND i.indisunique AND i.indisvalid
               AND i.indpred IS NULL AND i.indexprs IS NULL AND k.position <= i.indnkeyatts
             ORDER BY i.indisprimary DESC, i.indnkeyatts, ic.relname, k.position
            """)
        var candidates: [(key: Key, isUsable: Bool)] = []
        for row in rows {
            let index = try row.decode(String.self, "index_name")
            let column = try row.decode(String.self, "column_name")
            let isUsable = try row.decode(Bool.self, "not_null")
            if let last = candidates.last, last.key.index == index {
                candidates[candidates.count - 1] = (Key(columns: last.key.columns + [column], index: index, isPrimary: last.key.isPrimary),
                                                    last.isUsable && isUsable)
            } else {
                candidates.append((Key(columns: [column], index: index, isPrimary: try row.decode(Bool.self, "is_primary")), isUsable))
            }
        }
        return candidates.first { $0.isUsable && $0.key.columns.count <= maximumKeyColumns }?.key
    }
}
