import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Objects of the application's that use a column contract drops (a view, a function with an
/// SQL-standard body) are found by contract's checks, before contract applies anything, rather
/// than by the drop, after contract's constraints were applied.
@Suite("Contract and what uses the legacy columns", .timeLimit(.minutes(3)))
struct ContractDependentsTests {
    /// An orders table made by `schema` (with 100 orders), its plan moving `status` to
    /// `status_code` (with `operations` after), taken through expand, the writer switch and the
    /// backfill.
    private struct Backfilled {
        let database: TestDatabase
        let folder: URL

        init(_ label: String, schema: String, operations: String = "") async throws {
            let database = try await TestPostgres.database(label)
            try await onThread {
                try database.connect().execute(unsafeSQL: """
                    CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, placed_by int NOT NULL DEFAULT 0);
                    INSERT INTO orders SELECT g, CASE WHEN g % 2 = 0 THEN 'new' ELSE 'paid' END FROM generate_series(1, 100) AS g;
                    \(schema)
                    """)
            }
            self.database = database
            folder = TestScratch.url("\(label)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try """
                {"format": 2, "name": "orders", "table": "public.orders", "key": "id", "columns": ["placed_by"],
                 "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint", "notNull": true},
                   "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
                   "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}\(operations)]}
                """.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
            for step in [["init"], ["expand", "--skip-rehearsal"], ["switch", "modern", "--force-readers"], ["backfill"]] {
                let run = try await phase(step)
                #expect(run.status == 0, "\(step): \(run.diagnostics)")
            }
        }

        func phase(_ arguments: [String]) async throws -> PhaseBinary.Run {
            let (path, url) = (folder.path, database.connectionString)
            return try await onThread { try PhaseBinary.run(["--plan", path] + arguments, databaseURL: url) }
        }

        func phase(_ arguments: String...) async throws -> PhaseBinary.Run {
            try await phase(arguments)
        }

        /// The column `v` of each row `text` returns.
        func sql(_ text: String) async throws -> [String] {
            let database = database
            return try await onThread { try database.connect().execute(unsafeSQL: text).map { try $0.decode(String.self, "v") } }
        }

        func remove() {
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test func aViewAndAFunctionOverTheLegacyColumnRefuseContractUntilTheyAreGone() async throws {
        let fixture = try await Backfilled("contract_dependents", schema: """
            CREATE VIEW open_orders AS SELECT id, status FROM orders WHERE status = 'new';
            -- The table's own CHECK goes with the column; it is not named.
            ALTER TABLE orders ADD CONSTRAINT orders_status_known CHECK (status IN ('new', 'paid'));
            CREATE FUNCTION order_label(o orders) RETURNS text LANGUAGE sql RETURN o.id || ' ' || o.status;
            """, operations: #", {"create_index": {"name": "orders_code_placer", "columns": ["status_code", "placed_by"]}}"#)
        defer { fixture.remove() }
        let (phase, sql) = (fixture.phase as (String...) async throws -> PhaseBinary.Run, fixture.sql)
        let failed = "FAILED nothing else uses the dropped columns: expected is null, observed function order_label(orders), view open_orders"
        let checked = try await phase("check", "contract")
        #expect(checked.status == 3, "\(checked.diagnostics)")
        #expect(checked.output.contains(failed), "\(checked.output)")

        let refused = try await phase("contract", "--yes", "--window", "0s")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("check failed: nothing else uses the dropped columns"), "\(refused.diagnostics)")
        // Nothing of contract was applied: no constraint on the modern column, the legacy one kept.
        #expect(try await sql("SELECT conname::text AS v FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c'")
            == ["orders_status_known"])
        #expect(try await sql("SELECT string_agg(attname, ',' ORDER BY attnum) AS v FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum > 0 AND NOT attisdropped")
            == ["id,status,placed_by,status_code"])

        // Rolling back instead: a view over the modern column refuses the revert by its check,
        // which names it, before anything is dropped, and so does an index of the application's
        // on the modern column and another, which the drop would take without a word. The
        // plan's own index on the same columns, which the revert drops, is not named.
        _ = try await sql("""
            CREATE VIEW order_codes AS SELECT id, status_code FROM orders; CREATE INDEX orders_by_code ON orders (placed_by, status_code);
            SELECT 'made' AS v
            """)
        let revert = try await phase("rollback", "switch", "--epoch", "3")
        #expect(revert.status == 0, "\(revert.diagnostics)")
        let rollback = try await phase("rollback", "expand", "--epoch", "4")
        #expect(rollback.status == 3, "\(rollback.diagnostics)")
        #expect((rollback.output + rollback.diagnostics).contains(
            "check failed: nothing else uses the modern columns: expected is null, observed view order_codes"), "\(rollback.output)\(rollback.diagnostics)")
        #expect((rollback.output + rollback.diagnostics).contains(
            "nothing that stays goes with the modern columns: expected is null, observed index orders_by_code"), "\(rollback.output)\(rollback.diagnostics)")
        #expect(try await sql("SELECT phase AS v FROM cutover.migration_state WHERE plan = 'orders'") == ["expanded"])
        _ = try await sql("DROP VIEW order_codes; DROP INDEX orders_by_code; SELECT 'dropped' AS v")
        for step in [["switch", "modern", "--force-readers"], ["backfill"]] {
            let run = try await fixture.phase(step)
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }

        _ = try await sql("DROP VIEW open_orders; DROP FUNCTION order_label(orders); SELECT 'dropped' AS v")
        let contracted = try await phase("contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(try await sql("SELECT string_agg(attname, ',' ORDER BY attnum) AS v FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum > 0 AND NOT attisdropped")
            == ["id,placed_by,status_code"])
        #expect(try await sql("SELECT conname::text AS v FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c'") == [],
                "the table's own CHECK went with its column")
    }

    /// `DROP COLUMN` drops without a word every index, constraint of the table's own and
    /// statistics object that names the column. Contract's check names those that also cover a
    /// column that stays, whose loss would change what the remaining columns keep, and leaves
    /// out those on the dropped column alone, which go with it as they should.
    @Test func whatAlsoCoversAColumnThatStaysRefusesContractUntilMadeAgain() async throws {
        let fixture = try await Backfilled("contract_covers_staying", schema: """
            CREATE INDEX orders_status ON orders (status);
            ALTER TABLE orders ADD CONSTRAINT orders_status_known CHECK (status IN ('new', 'paid'));
            ALTER TABLE orders ADD CONSTRAINT orders_placer_status UNIQUE (placed_by, id, status);
            CREATE INDEX orders_open_by ON orders (placed_by) WHERE status <> 'paid';
            ALTER TABLE orders ADD CONSTRAINT orders_new_placed CHECK (status <> 'new' OR placed_by >= 0);
            CREATE STATISTICS orders_status_placer ON status, placed_by FROM orders;
            """, operations: #", {"drop_index": {"name": "orders_open_by"}}"#)
        defer { fixture.remove() }
        // orders_open_by is not named: the plan's contract drops it.
        let named = "constraint orders_new_placed on table orders, constraint orders_placer_status on table orders, "
            + "statistics object orders_status_placer"
        let checked = try await fixture.phase("check", "contract")
        #expect(checked.status == 3, "\(checked.diagnostics)")
        #expect(checked.output.contains("FAILED nothing that stays goes with the dropped columns: expected is null, observed " + named),
                "\(checked.output)")
        #expect(checked.output.contains("ok     nothing else uses the dropped columns"), "\(checked.output)")
        let refused = try await fixture.phase("contract", "--yes", "--window", "0s")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(try await fixture.sql("SELECT count(*)::text AS v FROM pg_index WHERE indrelid = 'orders'::regclass") == ["4"])

        // Made again without the legacy column, over the modern one where they need it.
        _ = try await fixture.sql("""
            ALTER TABLE orders DROP CONSTRAINT orders_placer_status, ADD CONSTRAINT orders_placer UNIQUE (placed_by, id, status_code);
            ALTER TABLE orders DROP CONSTRAINT orders_new_placed; DROP STATISTICS orders_status_placer;
            SELECT 'made again' AS v
            """)
        let contracted = try await fixture.phase("contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(try await fixture.sql("""
            SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY indexrelid::regclass::text) AS v FROM pg_index WHERE indrelid = 'orders'::regclass
            """) == ["orders_pkey,orders_placer"], "the index on the legacy column alone went with it, the plan dropped its own")
    }

    /// A plan of hand-written SQL files has no such check: its revert stops on the view in its
    /// one transaction, and the error names the view without the server's hint to CASCADE,
    /// which would drop the application's view with the column.
    @Test func aHandWrittenRevertStoppedByAViewNamesItWithoutSuggestingCascade() async throws {
        let db = try await WorkflowDatabase.make("revert_dependents_format1", rows: 5)
        let plan = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1").path
        for step in [["init"], ["expand"]] {
            #expect(try await db.phase(["--plan", plan] + step).status == 0, "\(step)")
        }
        _ = try await db.sql { try $0.execute(unsafeSQL: "CREATE VIEW draft_documents AS SELECT id, document FROM drafts") }
        let rollback = try await db.phase("--plan", plan, "rollback", "expand", "--epoch", "1")
        #expect(rollback.status == 1, "\(rollback.diagnostics)")
        #expect(rollback.diagnostics.contains("view draft_documents depends on column document of table drafts"), "\(rollback.diagnostics)")
        #expect(!rollback.diagnostics.contains("CASCADE"), "\(rollback.diagnostics)")
        #expect(try await db.value(String.self, "SELECT phase FROM cutover.migration_state WHERE plan = 'drafts'") == "expanded")
    }
}
