import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Objects of the application's that use a column contract drops (a view, a function with an
/// SQL-standard body) are found by contract's checks, before contract applies anything, rather
/// than by the drop, after contract's constraints were applied.
@Suite("Contract and what uses the legacy columns", .timeLimit(.minutes(3)))
struct ContractDependentsTests {
    @Test func aViewAndAFunctionOverTheLegacyColumnRefuseContractUntilTheyAreGone() async throws {
        let database = try await TestPostgres.database("contract_dependents")
        try await onThread {
            try database.connect().execute(unsafeSQL: """
                CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO orders SELECT g, CASE WHEN g % 2 = 0 THEN 'new' ELSE 'paid' END FROM generate_series(1, 100) AS g;
                CREATE VIEW open_orders AS SELECT id, status FROM orders WHERE status = 'new';
                -- The table's own CHECK goes with the column; it is not named.
                ALTER TABLE orders ADD CONSTRAINT orders_status_known CHECK (status IN ('new', 'paid'));
                CREATE FUNCTION order_label(o orders) RETURNS text LANGUAGE sql RETURN o.id || ' ' || o.status;
                """)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-dependents-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            {"format": 2, "name": "orders", "table": "public.orders", "key": "id",
             "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint", "notNull": true},
               "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
               "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}]}
            """.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
        let url = database.connectionString
        func phase(_ arguments: String...) async throws -> PhaseBinary.Run {
            try await onThread { try PhaseBinary.run(["--plan", folder.path] + arguments, databaseURL: url) }
        }
        func sql(_ text: String) async throws -> [String] {
            try await onThread { try database.connect().execute(unsafeSQL: text).map { try $0.decode(String.self, "v") } }
        }
        for step in [["init"], ["expand", "--skip-rehearsal"], ["switch", "modern", "--force-readers"], ["backfill"]] {
            let run = try await onThread { try PhaseBinary.run(["--plan", folder.path] + step, databaseURL: url) }
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }
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
            == ["id,status,status_code"])

        // Rolling back instead: a view over the modern column refuses the revert by its check,
        // which names it, before anything is dropped.
        _ = try await sql("CREATE VIEW order_codes AS SELECT id, status_code FROM orders; SELECT 'made' AS v")
        let revert = try await phase("rollback", "switch", "--epoch", "3")
        #expect(revert.status == 0, "\(revert.diagnostics)")
        let rollback = try await phase("rollback", "expand", "--epoch", "4")
        #expect(rollback.status == 3, "\(rollback.diagnostics)")
        #expect((rollback.output + rollback.diagnostics).contains(
            "check failed: nothing else uses the modern columns: expected is null, observed view order_codes"), "\(rollback.output)\(rollback.diagnostics)")
        #expect(try await sql("SELECT phase AS v FROM cutover.migration_state WHERE plan = 'orders'") == ["expanded"])
        _ = try await sql("DROP VIEW order_codes; SELECT 'dropped' AS v")
        for step in [["switch", "modern", "--force-readers"], ["backfill"]] {
            let run = try await onThread { try PhaseBinary.run(["--plan", folder.path] + step, databaseURL: url) }
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }

        _ = try await sql("DROP VIEW open_orders; DROP FUNCTION order_label(orders); SELECT 'dropped' AS v")
        let contracted = try await phase("contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(try await sql("SELECT string_agg(attname, ',' ORDER BY attnum) AS v FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum > 0 AND NOT attisdropped")
            == ["id,status_code"])
        #expect(try await sql("SELECT conname::text AS v FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c'") == [],
                "the table's own CHECK went with its column")
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
