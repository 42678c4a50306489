import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Two tables whose plans meet on a name: the sync function's (named after the table's schema
/// and name joined, so `public.sales_eu_orders` and `sales_eu.orders` come to the same one),
/// or the plan's own (`phase new` names a plan after its table, so `public.t` and `s.t` both
/// get `t`). Neither may take over the other's migration.
@Suite("Plans whose names meet", .timeLimit(.minutes(3)))
struct NameCollisionTests {
    /// A database holding `setup`, and a plan folder per table, each plan named `name(table)`.
    private struct Scene {
        let database: TestDatabase
        let folders: [String: String]
        let root: URL

        init(_ label: String, setup: String, tables: [String], name: (String) -> String) async throws {
            let database = try await TestPostgres.database(label)
            try await onThread { _ = try database.connect().execute(unsafeSQL: setup) }
            self.database = database
            root = TestScratch.url("name-collision")
            var folders: [String: String] = [:]
            for table in tables {
                let folder = root.appendingPathComponent(table)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try """
                    {"format": 2, "name": "\(name(table))", "table": "\(table)", "key": "id",
                     "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
                       "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
                       "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}]}
                    """.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
                folders[table] = folder.path
            }
            self.folders = folders
        }

        func phase(_ table: String, _ arguments: String...) async throws -> PhaseBinary.Run {
            let url = database.connectionString
            let folder = try #require(folders[table])
            return try await onThread { try PhaseBinary.run(["--plan", folder] + arguments, databaseURL: url) }
        }

        /// The old application inserts a paid row into `table`; what the trigger gave its modern column.
        func legacyInsert(_ table: String, id: Int) async throws -> String? {
            let database = database
            return try await onThread {
                let connection = try database.connect(applicationName: "legacy-app")
                try connection.execute(unsafeSQL: "INSERT INTO \(table) (id, status) VALUES (\(id), 'paid')")
                return try connection.execute(unsafeSQL: "SELECT status_code::text AS code FROM \(table) WHERE id = \(id)")[0]
                    .decode(String?.self, "code")
            }
        }

        func query(_ sql: String) async throws -> [String] {
            let database = database
            return try await onThread { try database.connect().execute(unsafeSQL: sql).map { try $0.decode(String.self, "v") } }
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func expandRefusesToReplaceAnotherTablesSyncFunctionUntilThatMigrationIsRolledBack() async throws {
        let (first, second) = ("public.sales_eu_orders", "sales_eu.orders")
        let scene = try await Scene("sync_function_names", setup: """
            CREATE SCHEMA sales_eu;
            CREATE TABLE public.sales_eu_orders (id bigint PRIMARY KEY, status text NOT NULL);
            CREATE TABLE sales_eu.orders (id bigint PRIMARY KEY, status text NOT NULL);
            """, tables: [first, second], name: { $0.replacing(".", with: "-") })
        defer { scene.remove() }
        for table in [first, second] { #expect(try await scene.phase(table, "init").status == 0) }
        let expanded = try await scene.phase(first, "expand", "--skip-rehearsal")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")

        let refused = try await scene.phase(second, "expand", "--skip-rehearsal")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains(
            "check failed: sync function not another table's: expected no other table's trigger calls cutover.sales_eu_orders_sync(), observed called by the trigger of sales_eu_orders"),
            "\(refused.diagnostics)")
        // The first table's old writers are untouched: its trigger still fills its own column.
        #expect(try await scene.legacyInsert(first, id: 1) == "2")
        #expect(try await scene.query("SELECT column_name::text AS v FROM information_schema.columns WHERE table_schema = 'sales_eu' ORDER BY ordinal_position")
            == ["id", "status"])

        // Once the first migration is rolled back, the second expands and its trigger works.
        let rolledBack = try await scene.phase(first, "rollback", "expand", "--epoch", "1")
        #expect(rolledBack.status == 0, "\(rolledBack.diagnostics)")
        let second2 = try await scene.phase(second, "expand", "--skip-rehearsal")
        #expect(second2.status == 0, "\(second2.diagnostics)")
        #expect(try await scene.legacyInsert(second, id: 1) == "2")
    }

    @Test("a second plan of a name whose migration began on another table is refused by init and by the step, not reported done")
    func aPlanNameTakenByAnotherTablesMigrationIsRefused() async throws {
        let (first, second) = ("public.t", "s.t")
        let scene = try await Scene("plan_name_reuse", setup: """
            CREATE SCHEMA s;
            CREATE TABLE public.t (id bigint PRIMARY KEY, status text NOT NULL);
            CREATE TABLE s.t (id bigint PRIMARY KEY, status text NOT NULL);
            """, tables: [first, second], name: { _ in "t" })
        defer { scene.remove() }
        let registered = "SELECT table_name AS v FROM cutover.record_plans WHERE plan = 't'"
        // Before either begins, a plan may change: the last init registers its table.
        #expect(try await scene.phase(first, "init").status == 0)
        #expect(try await scene.phase(second, "init").status == 0)
        #expect(try await scene.query(registered) == ["s.t"])
        // The plan that begins is the one the applications' saves are for.
        let expanded = try await scene.phase(first, "expand", "--skip-rehearsal")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
        #expect(try await scene.query(registered) == ["public.t"])

        let expectedLine = "check failed: applied SQL unchanged: expected unchanged, observed plan.json: table changed since the plan began"
        let advice = "the migration of this plan's name began on another table: if this plan.json is another table's plan, give it a name of its own"
        let initRefused = try await scene.phase(second, "init")
        #expect(initRefused.status == 3, "\(initRefused.diagnostics)")
        #expect(initRefused.diagnostics.contains(expectedLine) && initRefused.diagnostics.contains(advice), "\(initRefused.diagnostics)")
        let expandRefused = try await scene.phase(second, "expand", "--skip-rehearsal")
        #expect(expandRefused.status == 3, "\(expandRefused.diagnostics)")
        #expect(expandRefused.diagnostics.contains(expectedLine), "\(expandRefused.diagnostics)")
        #expect(!expandRefused.output.contains("already done"))
        #expect(try await scene.query(registered) == ["public.t"])
        #expect(try await scene.query("SELECT column_name::text AS v FROM information_schema.columns WHERE table_schema = 's' ORDER BY ordinal_position")
            == ["id", "status"])
        // The first plan's own command, asked again, is still reported done.
        let again = try await scene.phase(first, "expand", "--skip-rehearsal")
        #expect(again.status == 0 && again.output.contains("already done"), "\(again.output)\(again.diagnostics)")
    }
}
