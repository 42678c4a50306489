import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase new` inspects a table on a real server and writes a starting declarative plan that
/// the plan reader refuses until its template is edited.
@Suite("phase new", .timeLimit(.minutes(3)))
struct NewCommandTests {
    /// A database of the test server holding the tables `setup` creates, and a plan folder
    /// path that does not exist yet.
    private struct Scene {
        let database: TestDatabase
        let folder: URL

        init(_ label: String, setup: String) async throws {
            database = try await TestPostgres.database(label)
            let database = database
            try await onThread { _ = try database.connect().execute(unsafeSQL: setup) }
            folder = TestScratch.url("new-plan")
        }

        var manifest: URL { folder.appendingPathComponent("plan.json") }

        func phase(_ arguments: String...) async throws -> PhaseBinary.Run {
            let url = database.connectionString
            let folder = folder.path
            return try await onThread { try PhaseBinary.run(["--plan", folder] + arguments, databaseURL: url) }
        }

        func plan() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: manifest))
            return try #require(object as? [String: Any])
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test func aPlanForPgrollsUsersTableIsRefusedUntilEditedAndThenCompiles() async throws {
        let scene = try await Scene("new_users", setup: "CREATE TABLE users (id serial PRIMARY KEY, name varchar(255) UNIQUE)")
        defer { scene.remove() }
        let run = try await scene.phase("new", "--table", "users")
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.hasPrefix("wrote \(scene.manifest.path): plan users for table public.users, key id (primary key users_pkey)\n"))
        #expect(run.output.contains("columns: id integer NOT NULL, name character varying(255)\n"))
        #expect(run.output.contains("  phase --plan \(scene.folder.path) plan\n"))
        let plan = try scene.plan()
        #expect(plan["format"] as? Int == 2)
        #expect(plan["name"] as? String == "users")
        #expect(plan["table"] as? String == "public.users")
        #expect(plan["key"] as? String == "id")
        #expect(plan["legacyApplicationPattern"] as? String == "legacy-%")

        // Unedited, the plan reader refuses it at the template's first placeholder.
        let refused = try await scene.phase("plan")
        #expect(refused.status == 64)
        #expect(refused.diagnostics.hasPrefix("Error: \(scene.manifest.path): operations[0].add_column.name: "), "\(refused.diagnostics)")
        #expect(refused.diagnostics.split(separator: "\n").count == 1)

        // Half edited, it is refused at the next placeholder.
        var text = try String(contentsOf: scene.manifest, encoding: .utf8)
        text = text.replacing(#""<edit: the name of the column to add, 1 to 63 bytes, such as description>""#, with: #""description""#)
        try text.write(to: scene.manifest, atomically: true, encoding: .utf8)
        let typeRefused = try await scene.phase("plan")
        #expect(typeRefused.status == 64)
        #expect(typeRefused.diagnostics.hasPrefix("Error: \(scene.manifest.path): operations[0].add_column.type: expected one of a type such as"),
                "\(typeRefused.diagnostics)")

        // Edited as pgroll's tutorial does it, it compiles.
        text = text.replacing(#""<edit: its type, such as text, smallint or varchar(255)>""#, with: #""text""#)
            .replacing(#""<edit: the value old rows and old writers get, an SQL expression over the row such as lower(name)>""#,
                       with: #""'description for ' || name""#)
            .replacing(#""key": "id","#, with: #""key": "id", "columns": ["name"],"#)
        try text.write(to: scene.manifest, atomically: true, encoding: .utf8)
        let shown = try await scene.phase("plan")
        #expect(shown.status == 0, "\(shown.diagnostics)")
        #expect(shown.output.contains("    ALTER TABLE public.users ADD COLUMN IF NOT EXISTS description text\n"))
    }

    @Test("a table named as SQL writes it, in a schema with a space and with a dot in its name, is found, written so that the plan reader reads it back, and expanded")
    func aQuotedTableNameIsFoundAndWrittenBack() async throws {
        let scene = try await Scene("new_quoted", setup: """
            CREATE SCHEMA "Sales Data";
            CREATE TABLE "Sales Data"."Order.Items" (order_id bigint, line int, status text NOT NULL, PRIMARY KEY (order_id, line));
            INSERT INTO "Sales Data"."Order.Items" VALUES (1, 1, 'new'), (1, 2, 'paid');
            """)
        defer { scene.remove() }
        let run = try await scene.phase("new", "--table", #""Sales Data"."Order.Items""#, "--name", "order-items")
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.hasPrefix(#"wrote \#(scene.manifest.path): plan order-items for table Sales Data."Order.Items", key order_id, line"#),
                "\(run.output)")
        #expect(try scene.plan()["table"] as? String == #"Sales Data."Order.Items""#)

        var text = try String(contentsOf: scene.manifest, encoding: .utf8)
        text = text.replacing(#""<edit: the name of the column to add, 1 to 63 bytes, such as description>""#, with: #""paid""#)
            .replacing(#""<edit: its type, such as text, smallint or varchar(255)>""#, with: #""boolean""#)
            .replacing(#""<edit: the value old rows and old writers get, an SQL expression over the row such as lower(name)>""#,
                       with: #""status = 'paid'""#)
            .replacing(#""legacyApplicationPattern""#, with: #""columns": ["status"], "legacyApplicationPattern""#)
        try text.write(to: scene.manifest, atomically: true, encoding: .utf8)
        let shown = try await scene.phase("plan")
        #expect(shown.status == 0, "\(shown.diagnostics)")
        #expect(shown.output.contains(#"    ALTER TABLE "Sales Data"."Order.Items" ADD COLUMN IF NOT EXISTS paid boolean"#), "\(shown.output)")
        #expect(try await scene.phase("init").status == 0)
        let expanded = try await scene.phase("expand", "--skip-rehearsal")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
        let database = scene.database
        // The old application's insert gets the new column from the sync trigger.
        let paid = try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: #"INSERT INTO "Sales Data"."Order.Items" (order_id, line, status) VALUES (2, 1, 'paid')"#)
            return try connection.query(#"SELECT paid FROM "Sales Data"."Order.Items" WHERE order_id = 2"#)[0].decode(Bool?.self, "paid")
        }
        #expect(paid == true)
    }

    @Test("a plan named after its table is refused when a plan of that name is tracked for another table, and written with --name")
    func aNameTrackedForAnotherTableIsRefused() async throws {
        let scene = try await Scene("new_name_taken", setup: """
            CREATE SCHEMA s;
            CREATE TABLE public.t (id bigint PRIMARY KEY, status text);
            CREATE TABLE s.t (id bigint PRIMARY KEY, status text);
            """)
        defer { scene.remove() }
        #expect(try await scene.phase("new", "--table", "public.t").status == 0)
        // The template edited into a plan, and its migration tracked.
        try """
            {"format": 2, "name": "t", "table": "public.t", "key": "id", "columns": ["status"],
             "operations": [{"add_column": {"name": "note", "type": "text", "up": "status"}}]}
            """.write(to: scene.manifest, atomically: true, encoding: .utf8)
        let initialized = try await scene.phase("init")
        #expect(initialized.status == 0, "\(initialized.diagnostics)")
        // Asked again for the same table, the name is its own.
        #expect(try await scene.phase("new", "--table", "public.t", "--force").status == 0)
        let refused = try await scene.phase("new", "--table", "s.t", "--force")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics == "Error: a plan named \"t\" is tracked in this database for public.t: pass --name to give this table's plan a name of its own\n",
                "\(refused.diagnostics)")
        #expect(try scene.plan()["table"] as? String == "public.t", "the plan written before stays")
        let named = try await scene.phase("new", "--table", "s.t", "--name", "s-t", "--force")
        #expect(named.status == 0, "\(named.diagnostics)")
        #expect(try scene.plan()["name"] as? String == "s-t")
    }

    @Test func anUnfinishedUpExpressionIsRefusedNamingAColumnThatDoesNotExist() async throws {
        let scene = try await Scene("new_up", setup: "CREATE TABLE accounts (id bigint PRIMARY KEY, mail text NOT NULL)")
        defer { scene.remove() }
        #expect(try await scene.phase("new", "--table", "accounts").status == 0)
        var text = try String(contentsOf: scene.manifest, encoding: .utf8)
        text = text.replacing(#""<edit: the name of the column to add, 1 to 63 bytes, such as description>""#, with: #""email""#)
            .replacing(#""<edit: its type, such as text, smallint or varchar(255)>""#, with: #""text""#)
        try text.write(to: scene.manifest, atomically: true, encoding: .utf8)
        let refused = try await scene.phase("plan")
        #expect(refused.status == 64)
        #expect(refused.diagnostics.contains("operations[0].add_column.up: expected a column the plan knows here (id)"), "\(refused.diagnostics)")
    }

    @Test func withoutAPrimaryKeyTheUniqueIndexOverTheFewestNotNullColumnsIsTheKey() async throws {
        let scene = try await Scene("new_composite", setup: """
            CREATE SCHEMA "Sales";
            CREATE TABLE "Sales"."Items" (tenant_id bigint NOT NULL, id bigint NOT NULL, code text, sku text NOT NULL, note text);
            CREATE UNIQUE INDEX items_code ON "Sales"."Items" (code);
            CREATE UNIQUE INDEX items_partial ON "Sales"."Items" (sku) WHERE note IS NULL;
            CREATE UNIQUE INDEX items_lower ON "Sales"."Items" (lower(sku));
            CREATE UNIQUE INDEX items_key ON "Sales"."Items" (tenant_id, id) INCLUDE (note);
            CREATE UNIQUE INDEX items_wide ON "Sales"."Items" (tenant_id, id, sku);
            """)
        defer { scene.remove() }
        let run = try await scene.phase("new", "--table", "Sales.Items", "--name", "items-code", "--format", "json")
        #expect(run.status == 0, "\(run.diagnostics)")
        let plan = try scene.plan()
        #expect(plan["table"] as? String == "Sales.Items")
        #expect(plan["name"] as? String == "items-code")
        #expect(plan["key"] as? [String] == ["tenant_id", "id"])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(result["keySource"] as? String == "unique index over NOT NULL columns items_key")
    }

    @Test func anExistingPlanIsKeptUnlessForced() async throws {
        let scene = try await Scene("new_force", setup: "CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL)")
        defer { scene.remove() }
        try FileManager.default.createDirectory(at: scene.folder, withIntermediateDirectories: true)
        try "{}\n".write(to: scene.manifest, atomically: true, encoding: .utf8)
        let kept = try await scene.phase("new", "--table", "orders")
        #expect(kept.status == 64)
        #expect(kept.diagnostics == "Error: \(scene.manifest.path) exists already: phase new keeps it; give --force to overwrite it\n")
        #expect(try String(contentsOf: scene.manifest, encoding: .utf8) == "{}\n")
        let forced = try await scene.phase("new", "--table", "orders", "--force")
        #expect(forced.status == 0, "\(forced.diagnostics)")
        #expect(forced.output.hasPrefix("overwrote \(scene.manifest.path): plan orders for table public.orders, key id"))
        #expect(try scene.plan()["table"] as? String == "public.orders")
    }

    @Test("a table the backfill cannot walk is refused in one line, exit 3, writing nothing", arguments: [
        ("heap", "has no primary key and no unique index over NOT NULL columns"),
        ("nullable_unique", "has no primary key and no unique index over NOT NULL columns"),
        ("missing", "no table missing in this database on the search_path"),
        ("a_view", "is not a table (relkind v)"),
        ("parted", "is a partitioned table"),
    ])
    func refusal(table: String, message: String) async throws {
        let scene = try await Scene("new_refused_\(table)", setup: """
            CREATE TABLE heap (a int, b text);
            CREATE TABLE nullable_unique (a int UNIQUE, b text);
            CREATE VIEW a_view AS SELECT 1 AS id;
            CREATE TABLE parted (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
            """)
        defer { scene.remove() }
        let run = try await scene.phase("new", "--table", table)
        #expect(run.status == 3, "\(run.diagnostics)")
        #expect(run.diagnostics.hasPrefix("Error: "), "\(run.diagnostics)")
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        #expect(run.diagnostics.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: scene.manifest.path))
    }

    @Test func aPlanFolderAndATableAreRequired() async throws {
        let noFolder = try PhaseBinary.run(["new", "--table", "users"])
        #expect(noFolder.status == 64)
        #expect(noFolder.diagnostics == "Error: phase new needs --plan DIR: the folder to write plan.json into\n")
        let noTable = try PhaseBinary.run(["--plan", "/nonexistent/plan", "new"])
        #expect(noTable.status == 64)
        #expect(noTable.diagnostics == "Error: phase new needs --table [schema.]name: the table to migrate\n")
    }
}
