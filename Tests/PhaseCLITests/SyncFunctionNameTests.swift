import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The sync trigger's function is named after the table's schema and name joined, so
/// `public.sales_eu_orders` and `sales_eu.orders` come to the same one: expand of the second
/// must not replace the function the first table's trigger calls.
@Suite("Two tables whose names join alike", .timeLimit(.minutes(3)))
struct SyncFunctionNameTests {
    private static func manifest(table: String) -> String {
        """
        {"format": 2, "name": "\(table.replacing(".", with: "-"))", "table": "\(table)", "key": "id",
         "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
           "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
           "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}]}
        """
    }

    @Test func expandRefusesToReplaceAnotherTablesSyncFunctionUntilThatMigrationIsRolledBack() async throws {
        let database = try await TestPostgres.database("sync_function_names")
        try await onThread {
            try database.connect().execute(unsafeSQL: """
                CREATE SCHEMA sales_eu;
                CREATE TABLE public.sales_eu_orders (id bigint PRIMARY KEY, status text NOT NULL);
                CREATE TABLE sales_eu.orders (id bigint PRIMARY KEY, status text NOT NULL);
                """)
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sync-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var folders: [String] = []
        for table in ["public.sales_eu_orders", "sales_eu.orders"] {
            let folder = root.appendingPathComponent(table)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.manifest(table: table).write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
            folders.append(folder.path)
        }
        let url = database.connectionString
        func phase(_ folder: String, _ arguments: String...) async throws -> PhaseBinary.Run {
            try await onThread { try PhaseBinary.run(["--plan", folder] + arguments, databaseURL: url) }
        }
        func legacyInsert(_ table: String, id: Int) async throws -> String? {
            try await onThread {
                let connection = try database.connect(applicationName: "legacy-app")
                try connection.execute(unsafeSQL: "INSERT INTO \(table) (id, status) VALUES (\(id), 'paid')")
                return try connection.execute(unsafeSQL: "SELECT status_code::text AS code FROM \(table) WHERE id = \(id)")[0]
                    .decode(String?.self, "code")
            }
        }
        for folder in folders { #expect(try await phase(folder, "init").status == 0) }
        let first = try await phase(folders[0], "expand", "--skip-rehearsal")
        #expect(first.status == 0, "\(first.diagnostics)")

        let refused = try await phase(folders[1], "expand", "--skip-rehearsal")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains(
            "check failed: sync function not another table's: expected no other table's trigger calls cutover.sales_eu_orders_sync(), observed called by the trigger of sales_eu_orders"),
            "\(refused.diagnostics)")
        // The first table's old writers are untouched: its trigger still fills its own column.
        #expect(try await legacyInsert("public.sales_eu_orders", id: 1) == "2")
        #expect(try await onThread {
            try database.connect().query("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'sales_eu' AND column_name = 'status_code'")[0]
                .decode(Int64.self, "n")
        } == 0)

        // Once the first migration is rolled back, the second expands and its trigger works.
        let rolledBack = try await phase(folders[0], "rollback", "expand", "--epoch", "1")
        #expect(rolledBack.status == 0, "\(rolledBack.diagnostics)")
        let second = try await phase(folders[1], "expand", "--skip-rehearsal")
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(try await legacyInsert("sales_eu.orders", id: 1) == "2")
    }
}
