import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// Every operation kind besides `alter_column` in one compiled plan on a real server, under the
/// statements an old and a new application send (INSERTs naming either side's columns, COPY,
/// UPDATEs of each kind, upserts, NULLs, DELETE), each case asserting the row after; then
/// backfill and contract, and what contract leaves of the table.
@Suite("Every operation kind's compiled steps on a real server")
struct DeclarativeOperationMatrixTests {
    static let manifest = """
        {"format": 2, "name": "items", "table": "items", "key": "id", "columns": ["name"],
         "operations": [
           {"add_column": {"name": "description", "type": "text", "notNull": true, "up": "'description for ' || name"}},
           {"drop_column": {"name": "legacy_code", "down": "'code-' || id"}},
           {"set_not_null": {"column": "note", "up": "'none'"}},
           {"create_index": {"name": "items_name_idx", "columns": ["name"]}},
           {"add_constraint": {"name": "items_name_short", "check": "length(name) < 100"}},
           {"drop_index": {"name": "items_legacy_code_idx"}},
           {"drop_constraint": {"name": "items_price_positive"}}
         ]}
        """

    static let schema = """
        CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, legacy_code text, note text,
                            price numeric CONSTRAINT items_price_positive CHECK (price > 0));
        CREATE INDEX items_legacy_code_idx ON items (legacy_code);
        INSERT INTO items (id, name, legacy_code, note, price) VALUES (1, 'one', 'A1', NULL, 5), (2, 'two', NULL, 'n2', 7),
                                                                      (3, 'three', 'A3', 'n3', NULL)
        """

    /// One statement and the row it must leave as `name|description|legacy_code|note`, NULL
    /// spelled out; nil when the row must be gone.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let sql: String
        let id: Int64
        let row: String?
        var testDescription: String { name }
    }

    static let beforeBackfill: [Case] = [
        Case(name: "legacy INSERT naming the legacy columns", sql: "INSERT INTO items (id, name, legacy_code, note) VALUES (10, 'ten', 'L10', 'n10')",
             id: 10, row: "ten|description for ten|L10|n10"),
        Case(name: "legacy INSERT of a NULL the plan makes NOT NULL", sql: "INSERT INTO items (id, name, legacy_code, note) VALUES (11, 'eleven', 'L11', NULL)",
             id: 11, row: "eleven|description for eleven|L11|none"),
        Case(name: "legacy INSERT leaving the dropped column out", sql: "INSERT INTO items (id, name) VALUES (12, 'twelve')",
             id: 12, row: "twelve|description for twelve|code-12|none"),
        Case(name: "new INSERT naming the new column, not the dropped one",
             sql: "INSERT INTO items (id, name, description, note) VALUES (13, 'thirteen', 'mine', 'n13')",
             id: 13, row: "thirteen|mine|code-13|n13"),
        Case(name: "new INSERT saying it is modern keeps the NULL it gives",
             sql: "BEGIN; SET LOCAL cutover.writer = 'modern'; INSERT INTO items (id, name, note) VALUES (14, 'fourteen', 'n14'); COMMIT",
             id: 14, row: "fourteen|NULL|code-14|n14"),
        Case(name: "legacy COPY, a row with the dropped column and one without",
             sql: #"COPY items (id, name, legacy_code) FROM PROGRAM 'printf "20\ttwenty\tL20\n21\ttwenty-one\t\\\\N\n"'"#,
             id: 20, row: "twenty|description for twenty|L20|none"),
        Case(name: "legacy COPY's row without the dropped column", sql: "SELECT 1", id: 21, row: "twenty-one|description for twenty-one|code-21|none"),
        Case(name: "legacy UPDATE writing a NULL the plan makes NOT NULL", sql: "UPDATE items SET note = NULL WHERE id = 2",
             id: 2, row: "two|NULL|NULL|none"),
        Case(name: "legacy UPDATE of the dropped column (a NULL the plan makes NOT NULL is filled too)", sql: "UPDATE items SET legacy_code = 'B1' WHERE id = 1", id: 1, row: "one|NULL|B1|none"),
        Case(name: "same-value UPDATE of a row not backfilled", sql: "UPDATE items SET name = name WHERE id = 3", id: 3, row: "three|NULL|A3|n3"),
        Case(name: "legacy INSERT … ON CONFLICT DO UPDATE",
             sql: "INSERT INTO items (id, name) VALUES (3, 'drei') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name",
             id: 3, row: "drei|NULL|A3|n3"),
        Case(name: "DELETE", sql: "DELETE FROM items WHERE id = 11", id: 11, row: nil),
    ]

    @Test(.timeLimit(.minutes(3)))
    func everyOperationKind() async throws {
        let database = try await TestPostgres.database("declarative_operations")
        let compiled = try DeclarativePlan(manifest: Array(Self.manifest.utf8)).compile()
        try await onThread {
            let setup = try database.connect()
            _ = try ControlSchema.install(on: setup)
            try setup.execute(unsafeSQL: Self.schema)
            let steps = CompiledSteps(compiled: compiled, connection: setup)
            #expect(try steps.failingChecks(.expand) == [])
            try steps.run(.expand)
            let expanded = try Self.indexes(on: setup)
            #expect(expanded == ["items_legacy_code_idx", "items_name_idx", "items_pkey"])

            let legacy = try database.connect(applicationName: "legacy-app")
            for step in Self.beforeBackfill {
                try legacy.execute(unsafeSQL: step.sql)
                let row = try Self.row(step.id, on: legacy)
                #expect(row == step.row, "\(step.name)")
            }

            #expect(try steps.backfill(batchSize: 2) == 0)
            #expect(try Self.row(1, on: setup) == "one|description for one|B1|none")
            #expect(try Self.row(3, on: setup) == "drei|description for drei|A3|n3")
            // The backfill cannot tell a NULL a modern writer gave from a row not yet converted.
            let modernNull = try Self.row(14, on: setup)
            #expect(modernNull == "fourteen|description for fourteen|code-14|n14")

            #expect(try steps.failingChecks(.contract) == [])
            try steps.run(.contract)
            let contracted = try setup.query("""
                SELECT (SELECT string_agg(attname || CASE WHEN attnotnull THEN '!' ELSE '' END, ',' ORDER BY attnum) FROM pg_attribute
                         WHERE attrelid = 'items'::regclass AND attnum > 0 AND NOT attisdropped) AS columns,
                       (SELECT string_agg(conname || CASE WHEN convalidated THEN '' ELSE ' (not valid)' END, ',' ORDER BY conname)
                          FROM pg_constraint WHERE conrelid = 'items'::regclass AND contype = 'c') AS checks,
                       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'items'::regclass AND NOT tgisinternal) AS triggers
                """)[0]
            #expect(try contracted.decode(String.self, "columns") == "id!,name!,note!,price,description!")
            #expect(try contracted.decode(String?.self, "checks") == "items_name_short")
            #expect(try contracted.decode(Int64.self, "triggers") == 0)
            #expect(try Self.indexes(on: setup) == ["items_name_idx", "items_pkey"])
            try legacy.execute(unsafeSQL: "INSERT INTO items (id, name, description, note) VALUES (30, 'thirty', 'after', 'n30')")
        }
    }

    static func row(_ id: Int64, on connection: PostgresConnection) throws -> String? {
        try connection.query("""
            SELECT concat_ws('|', name, coalesce(description, 'NULL'), coalesce(legacy_code, 'NULL'), coalesce(note, 'NULL')) AS row
              FROM items WHERE id = \(id)
            """).first?.decode(String.self, "row")
    }

    static func indexes(on connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'items'::regclass ORDER BY 1")
            .map { try $0.decode(String.self, "name") }
    }
}
