import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Control schema")
struct ControlSchemaTests {
    private func connection(_ label: String) async throws -> PostgresConnection {
        try await TestPostgres.database(label).connect()
    }

    @Test func installsOnceAndIsThenCurrent() async throws {
        let connection = try await connection("control_install")
        #expect(try ControlSchema.installedVersion(on: connection) == nil)
        #expect(throws: ControlSchemaError.missing(known: ControlSchema.version)) { try ControlSchema.verify(on: connection) }
        #expect(try ControlSchema.install(on: connection) == .installed(from: nil))
        #expect(try ControlSchema.install(on: connection) == .current)
        #expect(try ControlSchema.installedVersion(on: connection) == ControlSchema.version)
        try ControlSchema.verify(on: connection)
        let tables = try connection.query("""
            SELECT string_agg(table_name, ',' ORDER BY table_name) AS names FROM information_schema.tables WHERE table_schema = 'cutover'
            """)[0].decode(String.self, "names")
        #expect(tables == "applied_files,backfill_control,backfill_ranges,legacy_activity,migration_state,operation_ledger,outcome_log,phase_history,reader_epochs,readers,record_plans,record_statements,rehearsals,runner_lease,schema_version")
    }

    @Test func aNewerSchemaIsRefusedAndLeftAlone() async throws {
        let connection = try await connection("control_newer")
        try ControlSchema.install(on: connection)
        try connection.query("UPDATE cutover.schema_version SET version = \(ControlSchema.version + 1)")
        let expected = ControlSchemaError.newerThanBinary(found: ControlSchema.version + 1, known: ControlSchema.version)
        #expect(throws: expected) { try ControlSchema.install(on: connection) }
        #expect(throws: expected) { try ControlSchema.verify(on: connection) }
        #expect(try ControlSchema.installedVersion(on: connection) == ControlSchema.version + 1)
        #expect(expected.description == "the Cutover control schema is version \(ControlSchema.version + 1), newer than this binary knows (\(ControlSchema.version)); use a newer Cutover")
    }

    @Test("an application works with a version that leaves its side alone, in either direction; phase only with its own")
    func applicationsWorkAcrossVersionsThatLeaveThemAlone() async throws {
        let database = try await TestPostgres.database("control_applications")
        let connection = try database.connect()
        try ControlSchema.install(on: connection)
        #expect(try connection.query("SELECT applications_from FROM cutover.schema_version")[0]
            .decode(Int?.self, "applications_from") == ControlSchema.applicationSideSince)
        let newer = ControlSchema.version + 1
        // A newer version whose applications work from this one on.
        try connection.query("UPDATE cutover.schema_version SET version = \(newer), applications_from = \(ControlSchema.version)")
        try ControlSchema.verify(on: connection, for: .application)
        #expect(throws: ControlSchemaError.newerThanBinary(found: newer, known: ControlSchema.version)) {
            try ControlSchema.verify(on: connection)
        }
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        _ = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        // A newer version whose applications must be its own.
        try connection.query("UPDATE cutover.schema_version SET applications_from = \(newer)")
        #expect(throws: ControlSchemaError.newerThanBinary(found: newer, known: ControlSchema.version)) {
            try ControlSchema.verify(on: connection, for: .application)
        }
        await #expect(throws: ControlSchemaError.self) { _ = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil) }
        // Older versions: down to the oldest this binary's applications work with, and no further.
        try connection.query("UPDATE cutover.schema_version SET applications_from = NULL, version = \(ControlSchema.applicationSideSince)")
        try ControlSchema.verify(on: connection, for: .application)
        #expect(throws: ControlSchemaError.olderThanBinary(found: ControlSchema.applicationSideSince, known: ControlSchema.version)) {
            try ControlSchema.verify(on: connection)
        }
        try connection.query("UPDATE cutover.schema_version SET version = \(ControlSchema.applicationSideSince - 1)")
        #expect(throws: ControlSchemaError.olderThanBinary(found: ControlSchema.applicationSideSince - 1, known: ControlSchema.version)) {
            try ControlSchema.verify(on: connection, for: .application)
        }
        await pool.shutdown()
    }

    @Test func anOlderSchemaIsUpgradedInOneTransaction() async throws {
        let connection = try await connection("control_older")
        // An older install: the version table says 0 and the outcome log does not exist yet.
        try connection.execute(unsafeSQL: """
            CREATE SCHEMA cutover;
            CREATE TABLE cutover.schema_version (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                version integer NOT NULL, installed_at timestamptz NOT NULL DEFAULT now());
            INSERT INTO cutover.schema_version (version) VALUES (0);
            """)
        #expect(throws: ControlSchemaError.olderThanBinary(found: 0, known: ControlSchema.version)) {
            try ControlSchema.verify(on: connection)
        }
        #expect(try ControlSchema.install(on: connection) == .installed(from: 0))
        try ControlSchema.verify(on: connection)
        let present = try connection.query("SELECT to_regclass('cutover.outcome_log') IS NOT NULL AS present")[0].decode(Bool.self, "present")
        #expect(present)
    }

    @Test func aFailedUpgradeChangesNothing() async throws {
        let connection = try await connection("control_failed_upgrade")
        try connection.execute(unsafeSQL: """
            CREATE SCHEMA cutover;
            CREATE TABLE cutover.schema_version (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                version integer NOT NULL, installed_at timestamptz NOT NULL DEFAULT now());
            INSERT INTO cutover.schema_version (version) VALUES (0);
            -- Something in the way of the file: a view where it creates a table.
            CREATE VIEW cutover.outcome_log AS SELECT 1 AS x;
            """)
        #expect(throws: PostgresError.self) { try ControlSchema.install(on: connection) }
        #expect(try ControlSchema.installedVersion(on: connection) == 0)
        let ledger = try connection.query("SELECT to_regclass('cutover.operation_ledger') IS NOT NULL AS present")[0].decode(Bool.self, "present")
        #expect(!ledger)
    }

    @Test(.timeLimit(.minutes(3)))
    func concurrentInstallersDoNotCollide() async throws {
        let database = try await TestPostgres.database("control_concurrent")
        let outcomes = try await withThrowingTaskGroup(of: ControlSchema.InstallOutcome.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
                    defer { Task { await pool.shutdown() } }
                    return try await pool.withConnection { try ControlSchema.install(on: $0) }
                }
            }
            var outcomes: [ControlSchema.InstallOutcome] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.filter { $0 == .installed(from: nil) }.count == 1)
        #expect(outcomes.filter { $0 == .current }.count == 3)
    }

    @Test func aVersion4InstallationUpgradesInPlaceAndKeepsItsRegistrationsAndLease() async throws {
        try await Roles.withRoles("control_from_4") { roles in
            let configuration = roles.configuration(roles.migrator)
            try await roles.installAsMigrator(version: 4, schema: ControlSchemaVersion4.schema,
                                              grants: ControlSchemaVersion4.grants) { migrator in
                try migrator.execute(unsafeSQL: """
                    INSERT INTO cutover.migration_state (plan) VALUES ('drafts');
                    INSERT INTO cutover.runner_lease (plan, pid, backend_start, database_role, os_user, application_name)
                    SELECT 'drafts', pid, backend_start, current_user, 'ops', 'old-runner' FROM pg_stat_activity WHERE pid = pg_backend_pid();
                    """)
            }
            let token = ReaderRegistry.makeToken()
            // Version 4's heartbeat, which takes no plan.
            try await roles.asApplication { app in
                try app.query("SELECT cutover.reader_heartbeat('web-1', 'web', '4.0', ARRAY['v1', 'v2'], \(token))")
            }
            let installed = try await onThread { () -> ControlSchema.InstallOutcome in
                try ControlSchema.install(on: try PostgresConnection(configuration: configuration))
            }
            #expect(installed == .installed(from: 4))
            let grants = try roles.sql("roles/grant_application.sql")
            _ = try await onThread { try PostgresConnection(configuration: configuration).execute(unsafeSQL: grants) }
            // The registration made under version 4 goes on with its secret, and may now report its epoch.
            let recorded = try await roles.asApplication { app in
                try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "web-1", applicationName: "web", applicationVersion: "4.1",
                                             formats: ["v1", "v2"], token: token, on: app)
                return try ReaderRegistry.follows(instanceID: "web-1", token: token, plan: "drafts", epoch: 0, on: app)
            }
            #expect(recorded)
            let (followers, lease) = try await roles.admin { connection in
                (try ReaderRegistry.followers(plan: "drafts", on: connection),
                 try connection.query("SELECT application_name, holder FROM cutover.runner_lease")[0].decode(String.self, "application_name"))
            }
            #expect(followers == [FleetMember(instanceID: "web-1", applicationName: "web", isLive: true, epoch: 0)])
            #expect(lease == "old-runner")
            // The application may read neither the epochs nor the lease.
            let refused = try await roles.asApplication { app in
                RolesTests.failure { try app.execute(unsafeSQL: "SELECT * FROM cutover.reader_epochs") }?.sqlState
            }
            #expect(refused == .insufficientPrivilege)
        }
    }

    @Test func theFileStatesTheVersionTheBinaryRecords() throws {
        let text = try SQLFiles.text(ControlSchema.file)
        #expect(text.hasPrefix("-- Cutover's control schema, version \(ControlSchema.version).\n"))
        #expect(throws: SQLFileError.self) { try SQLFiles.text("no/such.sql") }
        #expect(SQLFiles.paths.contains("drafts/plan.json") && SQLFiles.paths.contains("drafts/baseline.sql"))
    }
}
