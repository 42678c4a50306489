import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The least-privilege roles of docs/runbooks/roles.md, made by `sql/roles/`: the migrator runs
/// every step of the plan; the application saves, heartbeats and follows the writer path, and
/// can run none of the toolkit's DDL.
@Suite("least-privilege roles", .timeLimit(.minutes(2)))
struct RolesTests {
    @Test func theApplicationRoleIsRefusedTheToolkitsDDLAndControlTables() async throws {
        try await Roles.withRoles("roles_ddl") { roles in
            try await roles.installAsMigrator()
            let refused = [
                try SQLFiles.text("control/schema.sql"),
                try SQLFiles.text("drafts/expand.sql"),
                "ALTER TABLE drafts ADD COLUMN probe integer",
                "TRUNCATE drafts",
                "DROP TABLE cutover.operation_ledger",
                "DELETE FROM cutover.operation_ledger",
                "UPDATE cutover.migration_state SET writer_path = 'modern', epoch = epoch + 1",
                "INSERT INTO cutover.phase_history (plan, step, direction, database_role, os_user, outcome) VALUES ('drafts', 'expand', 'forward', 'x', 'x', 'done')",
                "SELECT * FROM cutover.readers",
            ]
            try await onThread {
                let app = try PostgresConnection(configuration: roles.configuration(roles.app))
                for statement in refused {
                    #expect(Self.failure { try app.execute(unsafeSQL: statement) }?.sqlState == .insufficientPrivilege,
                            "\(statement.prefix(80))")
                }
                // The messages the runbook shows.
                #expect(Self.failure { try app.execute(unsafeSQL: "ALTER TABLE drafts ADD COLUMN probe integer") }?.message
                        == "must be owner of table drafts")
                // The runner itself, with the application's credentials, changes nothing.
                let runner = PhaseRunner(connection: app, source: try PlanSource.builtIn())
                let refusal = Self.failure { try runner.run(.expand) }
                #expect(refusal?.sqlState == .insufficientPrivilege)
                #expect(refusal?.message == "permission denied for table runner_lease")
            }
            #expect(try await roles.columns() == ["id", "title", "revision"])
        }
    }

    @Test func theApplicationRoleHasExactlyTheGrantsTheRunbookLists() async throws {
        try await Roles.withRoles("roles_grants") { roles in
            try await roles.installAsMigrator()
            let (tables, functions, publicFunctions) = try await roles.admin { connection in
                let tables = try connection.query("""
                    SELECT table_schema || '.' || table_name || ': ' || string_agg(privilege_type, ', ' ORDER BY privilege_type) AS grant
                      FROM information_schema.role_table_grants WHERE grantee = \(roles.app)
                     GROUP BY table_schema, table_name ORDER BY table_schema, table_name
                    """).map { try $0.decode(String.self, "grant") }
                let functions = try connection.query("""
                    SELECT p.proname FROM pg_proc p
                     WHERE p.pronamespace = 'cutover'::regnamespace AND has_function_privilege(\(roles.app), p.oid, 'EXECUTE')
                     ORDER BY p.proname
                    """).map { try $0.decode(String.self, "proname") }
                // A NULL ACL is the default one, which lets PUBLIC execute.
                let publicFunctions = try connection.query("""
                    SELECT p.proname FROM pg_proc p
                     WHERE p.pronamespace = 'cutover'::regnamespace
                       AND (p.proacl IS NULL OR EXISTS (SELECT FROM aclexplode(p.proacl) a WHERE a.grantee = 0))
                    """).map { try $0.decode(String.self, "proname") }
                return (tables, functions, publicFunctions)
            }
            #expect(tables == [
                "cutover.migration_state: SELECT",
                "cutover.operation_ledger: INSERT, SELECT",
                "cutover.outcome_log: INSERT, SELECT, UPDATE",
                "cutover.schema_version: SELECT",
                "public.drafts: INSERT, SELECT, UPDATE",
            ])
            #expect(functions == ["reader_heartbeat", "reader_leave", "save_draft"])
            #expect(publicFunctions.isEmpty)
        }
    }

    @Test func theApplicationRoleSavesHeartbeatsAndFollowsTheMigratorThroughEveryPhase() async throws {
        try await Roles.withRoles("roles_app") { roles in
            try await roles.installAsMigrator()
            let pool = PostgresPool(configuration: roles.configuration(roles.app, applicationName: "billing-web"), maximumConnections: 2)
            let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
            let registration = try await ReaderRegistration(pool: pool, instanceID: "web-1", applicationName: "billing-web",
                                                            applicationVersion: "4.2.0", formats: [.v1, .v2])
            let fleet = try await FleetWriterPath.start(configuration: roles.configuration(roles.app), pollInterval: .milliseconds(200))
            let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                    following: fleet)
            func save(_ operation: String, expected: Int64, title: String) -> SaveDraft {
                SaveDraft(operationScope: "account-42", operationID: operation, draftID: "draft-1", expectedRevision: expected,
                          content: DraftContent(title: title, body: "notes"))
            }

            // Baseline: the legacy writer; a retry replays.
            #expect(try await router.saveReportingOutcome(save("op-1", expected: 0, title: "First")).outcome == .committed)
            #expect(try await router.saveReportingOutcome(save("op-1", expected: 0, title: "First")).outcome == .replayed)
            try await store.outcomes.flush()

            // The migrator expands and switches; the application's own heartbeat satisfies the
            // readers check, and its writer path follows.
            try await roles.runAsMigrator([.expand, .switchModern])
            #expect(await fleet.waitForEpoch(2, timeout: .seconds(10)))
            #expect(fleet.currentPath() == .modern)
            #expect(try await router.saveReportingOutcome(save("op-2", expected: 1, title: "Second")).outcome == .committed)
            #expect(try await store.read(id: "draft-1")?.content.body == "notes")

            // Old versions' plain SQL, as the application role, still works and is mirrored.
            try await roles.asApplication { connection in
                try connection.query("INSERT INTO drafts (id, title, revision) VALUES ('old-1', 'Old app', 1)")
            }
            #expect(try await store.read(id: "old-1")?.content.title == "Old app")

            try await roles.runAsMigrator([.backfill, .contract])
            #expect(try await router.saveReportingOutcome(save("op-3", expected: 2, title: "Third")).outcome == .committed)
            try await store.outcomes.flush()
            let counted = try await roles.admin { connection in
                try connection.query("SELECT sum(count)::bigint AS n FROM cutover.outcome_log")[0].decode(Int64.self, "n")
            }
            #expect(counted == 4)

            try await registration.stop()
            await fleet.stop()
            try? await store.outcomes.close()
            await pool.shutdown()
        }
    }

    @Test func theApplicationRoleCannotTakeHoldOrReleaseTheRunnersExclusion() async throws {
        try await Roles.withRoles("roles_lease") { roles in
            try await roles.installAsMigrator()
            try await roles.runAsMigrator([.expand])
            try await roles.admin { try $0.execute(unsafeSQL: "UPDATE cutover.migration_state SET phase = 'modern', writer_path = 'modern', epoch = 2") }
            // The application squats on the advisory lock keys earlier runners used, and tries
            // the lease table itself.
            // A pooled session keeps its advisory lock after the pool takes the connection back.
            let squatter = PostgresPool(configuration: roles.configuration(roles.app), maximumConnections: 1)
            try await squatter.withConnection { app in
                try app.query("SELECT pg_advisory_lock(\(Int32(0x6375_746f)), \(Int32(0x7275_6e72)))")
                for statement in [
                    "INSERT INTO cutover.runner_lease (plan, pid, backend_start, database_role, os_user, application_name) "
                        + "SELECT 'drafts', pg_backend_pid(), now(), 'x', 'x', 'x'",
                    "DELETE FROM cutover.runner_lease",
                    "SELECT * FROM cutover.runner_lease",
                ] {
                    #expect(Self.failure { try app.execute(unsafeSQL: statement) }?.sqlState == .insufficientPrivilege, "\(statement)")
                }
            }
            // The migrator's rollback goes ahead, and holds the plan while it runs.
            try await roles.runAsMigrator([.switchLegacy])
            let phase = try await roles.admin { connection in
                try connection.query("SELECT phase FROM cutover.migration_state WHERE plan = 'drafts'")[0].decode(String.self, "phase")
            }
            #expect(phase == "expanded")
            let held = try await roles.admin { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM pg_locks
                     WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """)[0].decode(Int.self, "n")
            }
            #expect(held == 1, "the squatter kept its advisory lock throughout")
            await squatter.shutdown()
        }
    }

    /// The server's error `body` fails with; nil when it does not fail that way.
    static func failure(_ body: () throws -> Void) -> PostgresError? {
        do {
            try body()
            return nil
        } catch {
            return error as? PostgresError
        }
    }
}

/// The roles of `sql/roles/` under names of their own (roles belong to the whole server, and
/// other test runs may share it), in a database holding the legacy drafts table.
private struct Roles: Sendable {
    let database: TestDatabase
    let migrator: String
    let app: String
    let password: String

    /// Makes the roles with `sql/roles/create_roles.sql`, runs `body`, and drops them again.
    static func withRoles(_ label: String, _ body: (Roles) async throws -> Void) async throws {
        let database = try await TestPostgres.database(label)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let roles = Roles(database: database, migrator: "cutover_migrator_\(suffix)", app: "cutover_app_\(suffix)",
                          password: UUID().uuidString)
        try await roles.admin { connection in
            let isSuperuser = try connection.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].decode(Bool.self, "rolsuper")
            try #require(isSuperuser, "the roles tests create roles, which takes a superuser; DATABASE_URL's role is not one")
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try connection.execute(unsafeSQL: try roles.sql("roles/create_roles.sql"))
            for role in [roles.migrator, roles.app] {
                try connection.execute(unsafeSQL: "ALTER ROLE \(try connection.quoteIdentifier(role)) PASSWORD '\(roles.password)'")
            }
        }
        do {
            try await body(roles)
        } catch {
            await roles.drop()
            throw error
        }
        await roles.drop()
    }

    /// A file of `sql/roles/` (or any SQL) with the roles' names in place of the runbook's.
    func sql(_ file: String) throws -> String {
        try SQLFiles.text(file).replacing("cutover_migrator", with: migrator).replacing("cutover_app", with: app)
    }

    func configuration(_ role: String, applicationName: String? = nil) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: database.connectionString, applicationName: applicationName,
                              connectTimeout: .seconds(10), parameters: ["user": role, "password": password])
    }

    /// Runs `body` on a connection as the server's administrator (the tests' own role).
    func admin<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let database = database
        return try await onThread { try body(try database.connect()) }
    }

    @discardableResult
    func asApplication<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let configuration = configuration(app)
        return try await onThread { try body(try PostgresConnection(configuration: configuration)) }
    }

    /// `phase init` and the application's grants, as the migrator: the runbook's steps 2 and 3.
    func installAsMigrator() async throws {
        let grants = try sql("roles/grant_application.sql")
        let configuration = configuration(migrator)
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            try PhaseRunner(connection: connection, source: try PlanSource.builtIn()).initialize()
            try connection.execute(unsafeSQL: grants)
        }
    }

    /// Runs plan steps as the migrator, with no modern-writer window to wait out.
    func runAsMigrator(_ steps: [PhaseStep]) async throws {
        let configuration = configuration(migrator)
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(),
                                     options: .init(modernWriterWindow: .zero))
            for step in steps { try runner.run(step) }
        }
    }

    func columns() async throws -> [String] {
        try await admin { connection in
            try connection.query("""
                SELECT attname FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                """).map { try $0.decode(String.self, "attname") }
        }
    }

    /// Drops both roles and everything they own or were granted in this database.
    func drop() async {
        _ = try? await admin { [migrator, app] connection in
            let names = try [migrator, app].map { try connection.quoteIdentifier($0) }.joined(separator: ", ")
            try connection.execute(unsafeSQL: """
                REASSIGN OWNED BY \(names) TO current_user;
                DROP OWNED BY \(names);
                DROP ROLE \(names);
                """)
        }
    }
}
