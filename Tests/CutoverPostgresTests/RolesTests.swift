import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The least-privilege roles of docs/runbooks/roles.md, made by `sql/roles/`: the migrator runs
/// every step of the plan; the application saves, heartbeats and follows the writer path, and
/// can run none of the toolkit's DDL.
@Suite("least-privilege roles", .timeLimit(.minutes(3)))
struct RolesTests {
    @Test func theApplicationRoleIsRefusedTheToolkitsDDLAndControlTables() async throws {
        try await Roles.withRoles("roles_ddl") { roles in
            try await roles.installAsMigrator()
            let refused = [
                try SQLFiles.text("control/schema.sql"),
                try PlanSource.builtIn().text("compiled/expand.sql"),
                "ALTER TABLE drafts ADD COLUMN probe integer",
                "TRUNCATE drafts",
                "DROP TABLE cutover.operation_ledger",
                "DELETE FROM cutover.operation_ledger",
                "UPDATE cutover.migration_state SET writer_path = 'modern', epoch = epoch + 1",
                "INSERT INTO cutover.phase_history (plan, step, direction, database_role, os_user, outcome) VALUES ('drafts', 'expand', 'forward', 'x', 'x', 'done')",
                "SELECT * FROM cutover.readers",
                "SELECT * FROM cutover.operation_ledger",
                "INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path) VALUES ('other', 'op', '\\x00', 'd', 1, 'legacy')",
                "SELECT * FROM cutover.outcome_log",
                "INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'error', 1000000)",
            ]
            try await onThread {
                let app = try PostgresConnection(configuration: roles.configuration(roles.app))
                for statement in refused {
                    let failure = Self.failure { try app.execute(unsafeSQL: statement) }
                    #expect(failure?.sqlState == .insufficientPrivilege,
                            "\(statement.prefix(80))")
                }
                // The messages the runbook shows.
                let alter = Self.failure { try app.execute(unsafeSQL: "ALTER TABLE drafts ADD COLUMN probe integer") }
                #expect(alter?.message == "must be owner of table drafts")
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
                // A writer path's function ends in a part of the md5 of its parameters' order.
                let functions = try connection.query("""
                    SELECT regexp_replace(p.proname, '_[0-9a-f]{8}$', '') AS proname FROM pg_proc p
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
                "cutover.schema_version: SELECT",
                "public.drafts: INSERT, SELECT, UPDATE",
            ])
            // Each of heartbeat, leave and record_outcomes twice: with the plan, and version 5's without it;
            // the drafts plan's own save functions: the one save_record calls, and the legacy
            // path's (the modern path's comes with expand).
            #expect(functions == ["read_record", "reader_follows", "reader_heartbeat", "reader_heartbeat", "reader_leave", "reader_leave",
                                  "record_outcomes", "record_outcomes", "save_draft", "save_legacy_drafts", "save_record", "save_record_drafts"])
            #expect(publicFunctions.isEmpty)
        }
    }

    @Test func theApplicationRoleSavesHeartbeatsAndFollowsTheMigratorThroughEveryPhase() async throws {
        try await Roles.withRoles("roles_app") { roles in
            try await roles.installAsMigrator()
            let pool = PostgresPool(configuration: roles.configuration(roles.app, applicationName: "billing-web"), maximumConnections: 2)
            let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
            let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "billing-web",
                                                            applicationVersion: "4.2.0", formats: [.v1, .v2])
            let fleet = try await FleetWriterPath.start(configuration: roles.configuration(roles.app), plan: "drafts", pollInterval: .milliseconds(200))
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
                    let failure = Self.failure { try app.execute(unsafeSQL: statement) }
                    #expect(failure?.sqlState == .insufficientPrivilege, "\(statement)")
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

    /// Row-level security that holds the migrator (here the table's owner, on a table that
    /// forces its policies on the owner too) refuses every step whose work or checks read the
    /// table's rows, naming the role, because the count of rows still to convert would miss the
    /// rows the policies hide; a session with `row_security` off, as `phase` opens them, fails
    /// such a count instead of giving it. With the policies no longer forced, expand runs.
    @Test func rowLevelSecurityThatHoldsTheMigratorRefusesTheStepsThatReadTheTablesRows() async throws {
        try await Roles.withRoles("roles_rls") { roles in
            try await roles.installAsMigrator()
            try await roles.admin { connection in
                try connection.execute(unsafeSQL: """
                    DELETE FROM drafts;
                    INSERT INTO drafts (id, title, revision) VALUES ('shown', 'A', 1), ('hidden', 'B', 1);
                    ALTER TABLE drafts ENABLE ROW LEVEL SECURITY;
                    ALTER TABLE drafts FORCE ROW LEVEL SECURITY;
                    CREATE POLICY not_hidden ON drafts USING (id <> 'hidden');
                    """)
            }
            let configuration = roles.configuration(roles.migrator)
            let name = "row-level security hides no row"
            let (refusal, outcomes, counted, filtered) = try await onThread {
                let connection = try PostgresConnection(configuration: configuration)
                let source = try PlanSource.builtIn()
                let runner = PhaseRunner(connection: connection, source: source, options: .init(modernWriterWindow: .zero))
                let refusal = #expect(throws: StepRefusal.self) { try runner.run(.expand) }
                let state = try runner.state()
                let outcomes = try [PhaseStep.backfill, .contract, .revertExpand, .switchModern].map { step in
                    try runner.checks(before: step, state: state).first { $0.name == name }
                }
                let count = BackfillEngine(plan: "drafts", batchSQL: "", remainingSQL: "SELECT count(*) FROM drafts")
                let counted = try count.remaining(on: connection)
                var unfiltered = configuration
                unfiltered.sessionSettings["row_security"] = "off"
                let filtered = Self.failure { _ = try count.remaining(on: try PostgresConnection(configuration: unfiltered)) }
                return (refusal, outcomes, counted, filtered)
            }
            let held = "the policies of drafts hold role \(roles.migrator)"
            #expect(refusal?.failedChecks.map { [$0.name, $0.observed] } == [[name, held]])
            #expect(outcomes.map { $0.map { [$0.name, $0.observed, "\($0.isPassed)"] } }
                    == [[name, held, "false"], [name, held, "false"], [name, held, "false"], nil])
            #expect(counted == 1, "the policies hide a row from the migrator's own count")
            #expect(filtered?.sqlState == .insufficientPrivilege, "\(String(describing: filtered))")

            try await roles.admin { try $0.execute(unsafeSQL: "ALTER TABLE drafts NO FORCE ROW LEVEL SECURITY") }
            try await roles.runAsMigrator([.expand])
            let phase = try await roles.admin { connection in
                try connection.query("SELECT phase FROM cutover.migration_state WHERE plan = 'drafts'")[0].decode(String.self, "phase")
            }
            #expect(phase == "expanded")
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
