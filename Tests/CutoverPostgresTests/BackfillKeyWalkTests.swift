import Cutover
import Foundation
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// The backfill walks the plan's key along the key's own btree index, with no index of
/// unconverted rows: expand refuses a key no index leads in its order or one that takes NULL,
/// and a batch's cursor
/// and range end are index conditions whatever the parameters, so a batch never reads the
/// table again up to its cursor.
@Suite("The backfill's walk along the key")
struct BackfillKeyWalkTests {
    static func manifest(key: String) -> String {
        """
        {"format": 2, "name": "items", "table": "public.items", "key": \(key),
         "operations": [{"alter_column": {"from": "amount", "to": {"name": "amount_cents", "type": "bigint"},
                                           "up": "round(amount * 100)", "down": "amount_cents / 100.0"}}]}
        """
    }

    static let table = table(extraColumns: "")

    /// The items table, 20,000 rows, with `extraColumns` (`, name type`) after its own.
    static func table(extraColumns: String) -> String {
        """
        CREATE TABLE items (tenant_id int, id int, code int NOT NULL, amount numeric NOT NULL\(extraColumns), PRIMARY KEY (tenant_id, id));
        INSERT INTO items SELECT n % 10, n, n, n FROM generate_series(1, 20000) AS n;
        ANALYZE items
        """
    }

    /// Runs `body` on a new database whose items table (`table`), keyed on (tenant_id, id), is expanded.
    static func expandedItems(_ name: String, table: String = Self.table,
                              _ body: @escaping @Sendable (PostgresConnection, CompiledSteps) throws -> Void) async throws {
        let database = try await TestPostgres.database(name)
        try await onThread {
            let connection = try database.connect()
            try body(connection, try CompiledSteps.expanded(Self.manifest(key: #"["tenant_id", "id"]"#), on: connection, after: table))
        }
    }

    /// Runs `body` on a new database with the control schema and `table`, not expanded, and the
    /// plan compiled for a key (as JSON) into steps on its connection.
    static func unexpanded(_ name: String, table: String,
                           _ body: @escaping @Sendable (PostgresConnection, (String) throws -> CompiledSteps) throws -> Void) async throws {
        let database = try await TestPostgres.database(name)
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: table)
            try body(connection) { key in
                CompiledSteps(compiled: try DeclarativePlan(manifest: Array(Self.manifest(key: key).utf8)).compile(), connection: connection)
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func expandRefusesAKeyNoIndexLeadsInItsOrder() async throws {
        try await Self.unexpanded("backfill_key_order", table: Self.table) { connection, steps in
            func failing(_ key: String) throws -> [String] { try steps(key).failingChecks(.expand) }
            #expect(try failing(#"["tenant_id", "id"]"#) == [])
            let reversed = try failing(#"["id", "tenant_id"]"#)
            #expect(reversed.count == 1 && reversed.first?.hasPrefix("key in an index's order:") == true, "\(reversed)")
            #expect(try failing(#""code""#).contains { $0.hasPrefix("key in an index's order:") })
            // A unique key that takes NULL: a NULL key never passes the walk's comparisons.
            try connection.execute(unsafeSQL: "ALTER TABLE items ADD COLUMN ref int UNIQUE")
            let nullable = try failing(#""ref""#)
            #expect(nullable == ["key columns NOT NULL: expected is null, observed 'ref'"], "\(nullable)")
            try connection.execute(unsafeSQL: "UPDATE items SET ref = id; ALTER TABLE items ALTER COLUMN ref SET NOT NULL")
            #expect(try failing(#""ref""#) == [])
            // An index that leads with the key serves, whatever follows it.
            try connection.execute(unsafeSQL: "CREATE INDEX items_id_tenant ON items (id, tenant_id, amount)")
            #expect(try failing(#"["id", "tenant_id"]"#) == [])
        }
    }

    /// An index whose key column orders otherwise than the column's own comparisons, by another
    /// collation or operator class, or holds it only as an `INCLUDE`d column, does not serve:
    /// PostgreSQL cannot walk it for the batch's comparisons, and would read and sort the whole
    /// table in every batch. A plain unique index of the same columns does.
    @Test(.timeLimit(.minutes(2)))
    func expandRefusesAKeyIndexThatOrdersOtherwise() async throws {
        try await Self.unexpanded("backfill_key_collation", table: """
            CREATE TABLE items (code text COLLATE "POSIX" NOT NULL, n int NOT NULL, amount numeric NOT NULL);
            INSERT INTO items SELECT 'item ' || n, n, n FROM generate_series(1, 2000) AS n
            """) { connection, steps in
            for (key, index) in [(#""code""#, #"(code COLLATE "C")"#), (#""code""#, "(code text_pattern_ops)"),
                                 (#"["code", "n"]"#, "(code) INCLUDE (n)")] {
                try connection.execute(unsafeSQL: "CREATE UNIQUE INDEX items_code ON items \(index)")
                let refused = try steps(key).failingChecks(.expand)
                #expect(refused.count == 1 && refused.first?.hasPrefix("key in an index's order:") == true, "\(index): \(refused)")
                try connection.execute(unsafeSQL: "DROP INDEX items_code")
            }
            let check = try #require(try steps(#""code""#).plan.step(.expand)?.checks.first { $0.name == "key in an index's order" })
            #expect(check.message.contains("each with the column's own collation and its type's default operator class"), "\(check.message)")
            try connection.execute(unsafeSQL: "CREATE UNIQUE INDEX items_code ON items (code, n)")
            #expect(try steps(#""code""#).failingChecks(.expand) == [])
            #expect(try steps(#"["code", "n"]"#).failingChecks(.expand) == [])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aBatchReadsFromItsCursorToItsRangesEndThroughTheKeysIndex() async throws {
        try await Self.expandedItems("backfill_key_walk") { connection, steps in
            try Self.expectBatchesWalkTheKeysIndex(steps, on: connection)
            #expect(try steps.backfill(batchSize: 700) == 0)
            #expect(try Self.unconverted(on: connection) == 0)
        }
    }

    /// A column of a NOT NULL domain, which the cursor does not name, leaves the cursor readable:
    /// the batch reads it back over a row of the table, where over `NULL::items` the domain
    /// would refuse the NULL it gave that column and every batch after the first would fail.
    @Test(.timeLimit(.minutes(2)))
    func aNotNullDomainColumnLeavesTheCursorReadable() async throws {
        let table = "CREATE DOMAIN label AS text NOT NULL;\n" + Self.table(extraColumns: ", label label DEFAULT 'an item'")
        try await Self.expandedItems("backfill_key_domain", table: table) { connection, steps in
            try Self.expectBatchesWalkTheKeysIndex(steps, on: connection)
            // 29 batches.
            #expect(try steps.backfill(batchSize: 700) == 0)
            #expect(try Self.unconverted(on: connection) == 0)
        }
    }

    /// The batch's generic plan, the one a prepared batch runs with after a few executions, from
    /// the start, from a cursor, and from a cursor to a range's end, each of 100 keys: each reads
    /// the key's index from its cursor to its range's end (both index conditions) and stops
    /// after its 100 rows.
    private static func expectBatchesWalkTheKeysIndex(_ steps: CompiledSteps, on connection: PostgresConnection) throws {
        let batch = try #require(steps.plan.step(.backfill)?.backfill).batch.path
        let sql = try #require(steps.compiled.fileTexts[batch]).split(separator: "\n")
            .filter { !$0.hasPrefix("--") }.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            .trimmingSuffix(";")
        try connection.execute(unsafeSQL: "SET plan_cache_mode = force_generic_plan")
        try connection.execute(unsafeSQL: "PREPARE walk(text, integer, text) AS \(sql)")
        for arguments in ["NULL, 100, NULL", #"'{"tenant_id": 5, "id": 9005}', 100, NULL"#,
                          #"'{"tenant_id": 5, "id": 9005}', 100, '{"tenant_id": 5, "id": 12005}'"#] {
            try connection.execute(unsafeSQL: "BEGIN")
            let plan = try connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, FORMAT TEXT) EXECUTE walk(\(arguments))"))
                .map { try $0.decode(String.self, at: 0) }.joined(separator: "\n")
            try connection.execute(unsafeSQL: "ROLLBACK")
            #expect(plan.contains("Index Cond: ((ROW(tenant_id, id) >= ROW("), "\(arguments)\n\(plan)")
            #expect(plan.contains("AND (ROW(tenant_id, id) <= ROW("), "\(arguments)\n\(plan)")
            // It stops after its 100 rows: it filters out at most the cursor's own row, not
            // the rows before it.
            let removed = plan.components(separatedBy: "Rows Removed by Filter: ").dropFirst()
                .map { Int($0.prefix { $0.isNumber }) ?? 0 }
            #expect(removed.allSatisfy { $0 <= 1 }, "\(arguments)\n\(plan)")
            // PostgreSQL 18 prints row counts with two decimals.
            #expect(plan.contains("rows=100 loops=1") || plan.contains("rows=100.00 loops=1"), "\(arguments)\n\(plan)")
        }
        try connection.execute(unsafeSQL: "DEALLOCATE walk; RESET plan_cache_mode")
    }

    /// The items whose modern column does not hold what `up` gives.
    private static func unconverted(on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT count(*) AS n FROM items WHERE amount_cents IS DISTINCT FROM amount * 100")[0].decode(Int64.self, "n")
    }

    /// A batch walks the next keys, converted or not: over a stretch the application has
    /// converted already, it converts nothing and moves its cursor by its size, where a batch
    /// that looked for rows to convert would read on until it found its size of them, as far as
    /// the whole table in one statement.
    @Test(.timeLimit(.minutes(2)))
    func aBatchWalksItsSizeOfKeysOverRowsConvertedAlready() async throws {
        try await Self.expandedItems("backfill_key_bounded") { connection, steps in
            let backfill = try #require(steps.plan.step(.backfill)?.backfill)
            let sql = try #require(steps.compiled.fileTexts[backfill.batch.path])
            // The old application writes the first five tenants' rows (10,000 of the 20,000, the
            // first in key order), and its trigger converts them.
            try connection.execute(unsafeSQL: "UPDATE items SET amount = amount + 1 WHERE tenant_id < 5")
            let convertedByApplication = try connection.query("SELECT count(*) AS n FROM items WHERE amount_cents IS NOT NULL")
            #expect(try convertedByApplication[0].decode(Int64.self, "n") == 10_000)
            let batch = { (cursor: String?) in
                try connection.query(PostgresQuery(unsafeSQL: sql, binds: [cursor.postgresBind, Int32(100).postgresBind,
                                                                        String?.none.postgresBind]))[0]
            }
            let first = try batch(nil)
            #expect(try first.decode(Int64.self, "converted") == 0)
            #expect(try first.decode(Int64.self, "scanned") == 100)
            let cursor = try #require(try first.decode(String?.self, "last_key"))
            let walkedTo = try connection.query(#"SELECT (\#(cursor)::jsonb) = '{"tenant_id": 0, "id": 1000}'::jsonb AS same"#)
            #expect(try walkedTo[0].decode(Bool.self, "same"), "\(cursor)")
            // From the last converted key, the next batch converts the first 100 rows after it.
            let next = try batch(#"{"tenant_id": 4, "id": 19994}"#)
            #expect(try next.decode(Int64.self, "converted") == 100)
            // The whole walk converts exactly the rows the application had not.
            #expect(try steps.backfill(batchSize: 700) == 0)
            #expect(try Self.unconverted(on: connection) == 0)
        }
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
