import Foundation
import PostgresClient
import Testing

/// `rename_table`: old writers keep the table and every statement under its old name until
/// contract, new writers use the new name (a view) from expand on, a rollback leaves the table
/// as it was, and contract gives the table its new name.
@Suite(.timeLimit(.minutes(3)))
struct RenameTableTests {
    private static let manifest = """
        {"format": 2, "name": "customers-to-clients", "table": "customers", "key": "id",
         "operations": [{"rename_table": {"to": "clients"}}]}
        """

    private static let oldWrites = [
        "INSERT INTO customers (id, mail) VALUES (100, 'old@example.com')",
        #"COPY customers (id, mail) FROM PROGRAM 'printf "101\\told-copy@example.com\\n"'"#,
        "UPDATE customers SET mail = mail WHERE id = 1",
        "INSERT INTO customers (id, mail) VALUES (2, 'upserted') ON CONFLICT (id) DO UPDATE SET mail = EXCLUDED.mail",
        "DELETE FROM customers WHERE id = 3",
    ]

    private static let newWrites = [
        "INSERT INTO clients (id, mail) VALUES (200, 'new@example.com') RETURNING id",
        "INSERT INTO clients (id, mail) VALUES (4, 'new-upsert') ON CONFLICT (id) DO UPDATE SET mail = EXCLUDED.mail",
        "UPDATE clients SET mail = 'changed' WHERE id = 5",
        "SELECT id FROM clients WHERE id = 1 FOR UPDATE",
        "DELETE FROM clients WHERE id = 6",
    ]

    @Test func oldAndNewNamesBothWorkUntilContractAndARollbackLeavesTheTable() async throws {
        let db = try await WorkflowDatabase.make("rename_table", rows: 1)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE customers (id bigint PRIMARY KEY, mail text NOT NULL);
                INSERT INTO customers SELECT n, 'customer' || n || '@example.com' FROM generate_series(1, 10) AS n;
                DROP ROLE IF EXISTS rename_reader; CREATE ROLE rename_reader;
                GRANT SELECT, INSERT ON customers TO rename_reader
                """)
        }
        let folder = try PlanFolder.make("rename_table", files: ["plan.json": Self.manifest])
        defer { folder.remove() }
        func phase(_ arguments: String...) async throws {
            let run = try await db.phase(["--plan", folder.path] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        try await phase("init")
        try await phase("expand")
        let grants = try await db.value(String.self, """
            SELECT has_table_privilege('rename_reader', 'clients', 'SELECT')::text || has_table_privilege('rename_reader', 'clients', 'INSERT')::text
                || has_table_privilege('rename_reader', 'clients', 'UPDATE')::text
            """)
        #expect(grants == "truetruefalse")
        try await db.sql { connection in
            for statement in Self.oldWrites + Self.newWrites { try connection.execute(unsafeSQL: statement) }
        }
        #expect(try await db.value(String.self, "SELECT string_agg(id || '=' || mail, ',' ORDER BY id) FROM clients WHERE id IN (2, 4, 5, 100, 101, 200)")
                == "2=upserted,4=new-upsert,5=changed,100=old@example.com,101=old-copy@example.com,200=new@example.com")
        #expect(try await db.value(Int.self, "SELECT count(*) FROM customers") == 11)

        try await phase("switch", "modern", "--force-readers")
        try await phase("backfill")
        try await phase("rollback", "switch")
        try await phase("rollback", "expand")
        #expect(try await db.value(Bool.self, "SELECT to_regclass('clients') IS NULL") == true)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM customers") == 11)
        try await db.sql { try $0.execute(unsafeSQL: Self.oldWrites[0].replacingOccurrences(of: "100", with: "102")) }

        try await phase("expand")
        try await phase("switch", "modern", "--force-readers")
        try await phase("backfill")
        do {
            let legacy = try db.database.connect(applicationName: "legacy-app")
            let refused = try await db.phase("--plan", folder.path, "contract", "--yes", "--window", "0s")
            #expect(refused.status == 3, "\(refused.diagnostics)")
            #expect(refused.diagnostics.contains("check failed: no legacy session connected"))
            withExtendedLifetime(legacy) {}
        }
        try await phase("contract", "--yes", "--window", "0s")
        #expect(try await db.value(String.self, "SELECT relkind::text FROM pg_class WHERE oid = to_regclass('clients')") == "r")
        #expect(try await db.value(Bool.self, "SELECT to_regclass('customers') IS NULL") == true)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM clients") == 12)
        try await db.sql { try $0.execute(unsafeSQL: Self.newWrites[0].replacingOccurrences(of: "200", with: "201")) }
    }
}
