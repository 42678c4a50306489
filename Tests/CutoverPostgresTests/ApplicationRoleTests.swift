import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The application role of docs/runbooks/roles.md acts only as itself: it saves, counts its
/// outcomes, heartbeats and leaves through the control schema's functions, and can reach
/// nothing those functions do not do for it.
@Suite("the application role acts only as itself", .timeLimit(.minutes(3)))
struct ApplicationRoleTests {
    @Test func outcomeCountsGoOnlyThroughTheirFunctionAndOnlyWithKnownCodesAndBoundedCounts() async throws {
        try await Roles.withRoles("app_outcomes") { roles in
            try await roles.installAsMigrator()
            let refusals = try await roles.asApplication { app in
                // The forged row of the report, written directly: refused.
                let forged = RolesTests.failure {
                    try app.execute(unsafeSQL: "INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'error', 1000000)")
                }
                let calls = [
                    "ARRAY['modern'], ARRAY['bogus'], ARRAY[1]",
                    "ARRAY['sideways'], ARRAY['committed'], ARRAY[1]",
                    "ARRAY[NULL, 'modern'], ARRAY['committed', 'committed'], ARRAY[1, 1]",
                    "ARRAY['modern', 'modern'], ARRAY[NULL, 'committed'], ARRAY[1, 1]",
                    "ARRAY['modern', 'modern'], ARRAY['committed', 'committed'], ARRAY[1, NULL]",
                    "ARRAY[['modern']], ARRAY[['committed']], ARRAY[[1]]",
                    "ARRAY['modern', 'modern'], ARRAY['committed'], ARRAY[1]",
                    "'{}', '{}', '{}'",
                    "NULL, ARRAY['committed'], ARRAY[1]",
                    "ARRAY['modern'], ARRAY['error'], ARRAY[0]",
                    "ARRAY['modern'], ARRAY['error'], ARRAY[-1]",
                    "ARRAY['modern'], ARRAY['error'], ARRAY[1000000001]",
                    "ARRAY['modern'], ARRAY['error'], ARRAY[9223372036854775807]",
                    "array_fill('modern'::text, ARRAY[65]), array_fill('committed'::text, ARRAY[65]), array_fill(1::bigint, ARRAY[65])",
                ]
                let refused = calls.map { arguments in
                    RolesTests.failure { try app.execute(unsafeSQL: "SELECT cutover.record_outcomes(\(arguments))") }?.sqlState
                }
                return (forged?.sqlState, refused)
            }
            #expect(refusals.0 == .insufficientPrivilege)
            #expect(refusals.1 == Array(repeating: .invalidParameterValue, count: refusals.1.count), "\(refusals.1)")
            let logged = try await roles.admin { try $0.query("SELECT count(*) AS n FROM cutover.outcome_log")[0].decode(Int.self, "n") }
            #expect(logged == 0)

            // Every code the recorder counts is accepted on both paths, summed per path and
            // outcome, and lands in the server's current minute.
            let codes = OutcomeRecorder.codes
            try await roles.asApplication { app in
                for path in ["legacy", "modern"] {
                    try app.query("""
                        SELECT cutover.record_outcomes(\("{" + codes.map { _ in path }.joined(separator: ",") + "}")::text[],
                                                       \("{" + codes.joined(separator: ",") + "}")::text[],
                                                       \("{" + codes.map { _ in "2" }.joined(separator: ",") + "}")::bigint[])
                        """)
                }
                try app.query("SELECT cutover.record_outcomes(ARRAY['modern', 'modern'], ARRAY['error', 'error'], ARRAY[3, 4])")
            }
            let stored = try await roles.admin { connection in
                try connection.query("""
                    SELECT path || ' ' || outcome || ' ' || count AS row, minute > now() - interval '2 minutes' AND minute <= now() AS recent
                      FROM cutover.outcome_log ORDER BY path, outcome COLLATE "C"
                    """).map { (try $0.decode(String.self, "row"), try $0.decode(Bool.self, "recent")) }
            }
            let expected = ["legacy", "modern"].flatMap { path in
                codes.sorted().map { "\(path) \($0) \(path == "modern" && $0 == "error" ? 9 : 2)" }
            }
            #expect(stored.map(\.0) == expected)
            #expect(stored.allSatisfy { $0.1 }, "every count is in the server's current minute")
        }
    }

    @Test func aRowsCountStopsAtItsLimitSoThatNoSumOverflows() async throws {
        try await Roles.withRoles("app_outcome_limit") { roles in
            try await roles.installAsMigrator()
            // A row one below the limit in this minute and the next: the call lands in one of them.
            _ = try await roles.admin { connection in
                try connection.execute(unsafeSQL: """
                    INSERT INTO cutover.outcome_log VALUES
                        (date_trunc('minute', clock_timestamp()), 'modern', 'committed', 999999999999999),
                        (date_trunc('minute', clock_timestamp()) + interval '1 minute', 'modern', 'committed', 999999999999999)
                    """)
            }
            try await roles.asApplication { app in
                try app.query("SELECT cutover.record_outcomes(ARRAY['modern'], ARRAY['committed'], ARRAY[1000000000])")
            }
            let counts = try await roles.admin { connection in
                try connection.query("SELECT count FROM cutover.outcome_log ORDER BY minute").map { try $0.decode(Int64.self, "count") }
            }
            #expect(counts.sorted() == [999_999_999_999_999, 1_000_000_000_000_000])
        }
    }

    @Test func theLedgerIsReachedOnlyThroughTheSaveWhichKeepsItsMeaning() async throws {
        try await Roles.withRoles("app_ledger") { roles in
            try await roles.installAsMigrator()
            let direct = try await roles.asApplication { app in
                [RolesTests.failure { try app.execute(unsafeSQL: "SELECT * FROM cutover.operation_ledger") }?.sqlState,
                 RolesTests.failure {
                     try app.execute(unsafeSQL: """
                         INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path)
                         VALUES ('another-account', 'their-next-edit', '\\x00', 'draft-9', 2, 'legacy')
                         """)
                 }?.sqlState]
            }
            #expect(direct == [.insufficientPrivilege, .insufficientPrivilege])

            let pool = PostgresPool(configuration: roles.configuration(roles.app), maximumConnections: 2)
            let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
            let adapter = LegacyDraftAdapter(storage: store)
            func save(_ operation: String, expected: Int64, title: String) -> SaveDraft {
                SaveDraft(operationScope: "account-42", operationID: operation, draftID: "draft-1", expectedRevision: expected,
                          content: DraftContent(title: title))
            }
            #expect(try await adapter.saveReportingOutcome(save("op-1", expected: 0, title: "First")).outcome == .committed)
            #expect(try await adapter.saveReportingOutcome(save("op-1", expected: 0, title: "First")).outcome == .replayed)
            await #expect(throws: SaveFailure.operationConflict) {
                _ = try await adapter.save(save("op-1", expected: 0, title: "Other"))
            }
            await #expect(throws: SaveFailure.conflict(expected: 5, current: 1)) {
                _ = try await adapter.save(save("op-2", expected: 5, title: "Stale"))
            }
            // The counts of those four saves go through record_outcomes.
            try await store.outcomes.flush()

            // A table of the caller's cannot stand in for the plan's: the save's search_path is
            // its own, with pg_temp last.
            let outcome = try await roles.asApplication { app in
                try app.execute(unsafeSQL: "CREATE TEMP TABLE drafts (id text PRIMARY KEY, title text NOT NULL, revision bigint NOT NULL)")
                return try app.query("""
                    SELECT outcome FROM cutover.save_draft('account-42', 'op-3', '\\x01', 'draft-2', 0, 'legacy', 'Real', NULL, 1000)
                    """)[0].decode(String.self, "outcome")
            }
            #expect(outcome == "committed")
            let (ledger, drafts, counted) = try await roles.admin { connection in
                (try connection.query("SELECT scope || '/' || operation_id AS claim FROM cutover.operation_ledger ORDER BY 1")
                    .map { try $0.decode(String.self, "claim") },
                 try connection.query("SELECT id || ' ' || title || ' ' || revision AS draft FROM public.drafts ORDER BY id")
                    .map { try $0.decode(String.self, "draft") },
                 try connection.query("SELECT outcome || ' ' || count AS n FROM cutover.outcome_log ORDER BY outcome")
                    .map { try $0.decode(String.self, "n") })
            }
            #expect(ledger == ["account-42/op-1", "account-42/op-3"])
            #expect(drafts == ["draft-1 First 1", "draft-2 Real 1"])
            #expect(counted == ["committed 1", "conflict 1", "operationConflict 1", "replayed 1"])
            try await store.outcomes.close()
            await pool.shutdown()
        }
    }

    @Test func nothingTheApplicationCreatesCanStandInForWhatTheSaveUses() async throws {
        try await Roles.withRoles("app_shadowing") { roles in
            try await roles.installAsMigrator()
            // As PostgreSQL 14 lets everyone create in public: a function that matches the
            // save's call of to_jsonb(record) more closely than the built-in, run as the
            // migrator if the save ever found it.
            _ = try await roles.admin { try $0.execute(unsafeSQL: "GRANT CREATE ON SCHEMA public TO \(try $0.quoteIdentifier(roles.app))") }
            let outcome = try await roles.asApplication { app in
                try app.execute(unsafeSQL: """
                    CREATE FUNCTION public.to_jsonb(record) RETURNS jsonb LANGUAGE plpgsql AS $f$
                    BEGIN RAISE EXCEPTION 'the application''s to_jsonb ran as %', current_user; END $f$;
                    SET search_path = public, pg_catalog;
                    """)
                return try app.query("""
                    SELECT outcome FROM cutover.save_draft('account-42', 'op-1', '\\x01', 'draft-1', 0, 'legacy', 'Real', NULL, 1000)
                    """)[0].decode(String.self, "outcome")
            }
            #expect(outcome == "committed")
            let (settings, namesTable) = try await roles.admin { connection in
                let row = try connection.query("""
                    SELECT array_to_string(proconfig, ';') AS settings, prosecdef AND prosrc LIKE '%UPDATE public.drafts d%' AS named
                      FROM pg_proc WHERE oid = 'cutover.save_draft(text, text, bytea, text, bigint, text, text, jsonb, integer)'::regprocedure
                    """)[0]
                return (try row.decode(String.self, "settings"), try row.decode(Bool.self, "named"))
            }
            #expect(settings == "search_path=pg_catalog, pg_temp")
            #expect(namesTable)
        }
    }

    @Test func aHeartbeatRefusesWhatCannotBeReadBack() async throws {
        try await Roles.withRoles("app_heartbeat") { roles in
            try await roles.installAsMigrator()
            let secret = "'a secret of the process'"
            let calls = [
                "'i4', 'web', '1', ARRAY[NULL, 'v2'], \(secret)",
                "'i4', 'web', '1', ARRAY[['v1'], ['v2']], \(secret)",
                "'i4', 'web', '1', ARRAY[repeat('v', 100000)], \(secret)",
                "'i4', 'web', '1', array_fill('v2'::text, ARRAY[17]), \(secret)",
                "'i4', 'web', '1', '{}', \(secret)",
                "'i4', 'web', '1', NULL, \(secret)",
                "'i4', 'web', '1', ARRAY['V2'], \(secret)",
                "'i4', 'web', '1', ARRAY['v12345'], \(secret)",
                "'i4' || chr(27) || '[2J', 'web', '1', ARRAY['v2'], \(secret)",
                "'i4', 'web' || chr(10) || 'live  forged', '1', ARRAY['v2'], \(secret)",
                "'i4', 'web', '1' || chr(155) || '31m', ARRAY['v2'], \(secret)",
                "'i4', 'web' || chr(8238), '1', ARRAY['v2'], \(secret)",
                "'', 'web', '1', ARRAY['v2'], \(secret)",
                "repeat('i', 256), 'web', '1', ARRAY['v2'], \(secret)",
                "'i4', repeat('w', 100000), '1', ARRAY['v2'], \(secret)",
                "'i4', 'web', '', ARRAY['v2'], \(secret)",
                "NULL, 'web', '1', ARRAY['v2'], \(secret)",
                "'i4', 'web', '1', ARRAY['v2'], 'short'",
                "'i4', 'web', '1', ARRAY['v2'], NULL",
            ]
            let refused = try await roles.asApplication { app in
                calls.map { arguments in
                    RolesTests.failure { try app.execute(unsafeSQL: "SELECT cutover.reader_heartbeat(\(arguments))") }?.sqlState
                }
            }
            #expect(refused == Array(repeating: .invalidParameterValue, count: calls.count), "\(refused)")
            let registered = try await roles.admin { try $0.query("SELECT count(*) AS n FROM cutover.readers")[0].decode(Int.self, "n") }
            #expect(registered == 0)
            // Through the Swift API the refusal is typed.
            let typed = try await roles.asApplication { app in
                do {
                    try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "i4\u{1B}]0;owned\u{07}", applicationName: "web", applicationVersion: "1",
                                                 formats: ["v2"], token: ReaderRegistry.makeToken(), on: app)
                    return nil as ReaderRegistryError?
                } catch let error as ReaderRegistryError {
                    return error
                }
            }
            #expect(typed == .invalid("reader_heartbeat: the instance ID must be 1 to 255 characters without control characters"))
        }
    }

    @Test func anotherProcessCanNeitherRewriteNorRemoveALiveRegistration() async throws {
        try await Roles.withRoles("app_registration") { roles in
            try await roles.installAsMigrator()
            let mine = ReaderRegistry.makeToken()
            let theirs = ReaderRegistry.makeToken()
            func beat(_ formats: [String], _ token: String) async throws -> ReaderRegistryError? {
                try await roles.asApplication { app in
                    do {
                        try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "report-1", applicationName: "reports", applicationVersion: "3.9",
                                                     formats: formats, token: token, on: app)
                        return nil
                    } catch let error as ReaderRegistryError {
                        return error
                    }
                }
            }
            func leave(_ token: String) async throws -> Bool {
                try await roles.asApplication { try ReaderRegistry.leave(plan: "drafts", instanceID: "report-1", token: token, on: $0) }
            }
            func formats() async throws -> [String] {
                try await roles.admin { try ReaderRegistry.list(plan: "drafts", on: $0).flatMap(\.formats) }
            }

            #expect(try await beat(["v1"], mine) == nil)
            // Another process claims the instance reads v2, then tries to remove it: refused both times.
            #expect(try await beat(["v1", "v2"], theirs) == .heldByAnotherProcess)
            #expect(try await leave(theirs) == false)
            #expect(try await formats() == ["v1"])
            #expect(try await beat(["v1"], mine) == nil, "the owner's own heartbeat still refreshes it")

            // Silent for longer than the registry's takeover time, the registration may be taken over
            // (its process died without leaving); then its old secret is the stranger's.
            _ = try await roles.admin { try $0.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = now() - interval '121 seconds'") }
            #expect(try await beat(["v1", "v2"], theirs) == nil)
            #expect(try await formats() == ["v1", "v2"])
            #expect(try await beat(["v1"], mine) == .heldByAnotherProcess)
            #expect(try await leave(mine) == false)
            #expect(try await leave(theirs) == true)
            #expect(try await formats() == [])

            // A Swift registration whose ID another live process holds registers beside it, under
            // a suffixed ID, rather than going missing.
            #expect(try await beat(["v1"], theirs) == nil)
            let pool = PostgresPool(configuration: roles.configuration(roles.app), maximumConnections: 1)
            let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "report-1", applicationName: "reports",
                                                            applicationVersion: "4.0", formats: [.v1, .v2])
            #expect(registration.instanceID.hasPrefix("report-1-") && registration.instanceID.count == "report-1-".count + 8)
            let listed = try await roles.admin { try ReaderRegistry.list(plan: "drafts", on: $0).map { "\($0.instanceID) \($0.applicationVersion)" } }
            #expect(listed == ["report-1 3.9", "\(registration.instanceID) 4.0"])
            try await registration.stop()

            // One that went silent and was taken over registers again beside the taker, under a
            // suffixed ID, at its next heartbeat.
            let quiet = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "batch-1", applicationName: "batch",
                                                     applicationVersion: "2.0", formats: [.v1], interval: .seconds(3600))
            _ = try await roles.admin {
                try $0.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = now() - interval '121 seconds' WHERE instance_id = 'batch-1'")
            }
            try await roles.asApplication { app in
                try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "batch-1", applicationName: "batch", applicationVersion: "2.0",
                                             formats: ["v1", "v2"], token: theirs, on: app)
            }
            try await quiet.heartbeat()
            #expect(quiet.instanceID.hasPrefix("batch-1-"))
            let batch = try await roles.admin { connection in
                try ReaderRegistry.list(plan: "drafts", on: connection).filter { $0.applicationName == "batch" }
                    .map { "\($0.instanceID) \($0.formats.joined(separator: ","))" }
            }
            #expect(batch == ["batch-1 v1,v2", "\(quiet.instanceID) v1"])
            try await quiet.stop()
            await pool.shutdown()
        }
    }

    @Test func theRegistryRefusesTheRegistrationPastItsLimitUntilStaleOnesMakeRoom() async throws {
        try await Roles.withRoles("app_registry_limit") { roles in
            try await roles.installAsMigrator()
            _ = try await roles.admin { connection in
                try connection.execute(unsafeSQL: """
                    INSERT INTO cutover.readers (instance_id, application_name, application_version, formats, token_sha256)
                    SELECT 'fake-' || n, 'fake', '1', ARRAY['v1'], sha256(n::text::bytea) FROM generate_series(1, \(ReaderRegistry.limit - 1)) n
                    """)
            }
            func register(_ id: String) async throws -> ReaderRegistryError? {
                try await roles.asApplication { app in
                    do {
                        try ReaderRegistry.heartbeat(plan: "drafts", instanceID: id, applicationName: "web", applicationVersion: "1",
                                                     formats: ["v2"], token: "secret of \(id) process", on: app)
                        return nil
                    } catch let error as ReaderRegistryError {
                        return error
                    }
                }
            }
            #expect(try await register("web-10000") == nil)
            #expect(try await register("web-10001") == .full)
            #expect(try await register("web-10000") == nil, "a registration already there still refreshes")
            _ = try await roles.admin {
                try $0.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = now() - interval '1 hour' WHERE instance_id IN ('fake-1', 'fake-2')")
            }
            #expect(try await register("web-10001") == nil)
            let count = try await roles.admin { try $0.query("SELECT count(*) AS n FROM cutover.readers")[0].decode(Int.self, "n") }
            #expect(count == ReaderRegistry.limit - 1)
        }
    }

    @Test func aVersion3InstallationUpgradesInPlaceAndTheDirectRightsAreGone() async throws {
        try await Roles.withRoles("app_upgrade") { roles in
            // Version 3, installed and granted as it shipped, in use by the application.
            let configuration = roles.configuration(roles.migrator)
            try await roles.installAsMigrator(version: 3, schema: ControlSchemaVersion3.schema, grants: ControlSchemaVersion3.grants)
            try await roles.asApplication { app in
                try app.query("""
                    SELECT outcome FROM cutover.save_draft('account-42', 'op-1', '\\x01', 'draft-1', 0, 'legacy', 'Before', NULL, 1000)
                    """)
                try app.execute(unsafeSQL: "INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'error', 1000000)")
                try app.execute(unsafeSQL: "SELECT cutover.reader_heartbeat('old-web', 'web', '3.0', ARRAY['v1'])")
                _ = try app.query("SELECT count(*) FROM cutover.operation_ledger")
            }

            // The migrator's `phase init` and the current grants.
            let installed = try await onThread { () -> ControlSchema.InstallOutcome in
                let migrator = try PostgresConnection(configuration: configuration)
                return try PhaseRunner(connection: migrator, source: try PlanSource.builtIn()).initialize().schema
            }
            #expect(installed == .installed(from: 3))
            let grants = try roles.sql("roles/grant_application.sql")
            _ = try await onThread { try PostgresConnection(configuration: configuration).execute(unsafeSQL: grants) }

            let tables = try await roles.admin { connection in
                try connection.query("""
                    SELECT table_schema || '.' || table_name || ': ' || string_agg(privilege_type, ', ' ORDER BY privilege_type) AS grant
                      FROM information_schema.role_table_grants WHERE grantee = \(roles.app)
                     GROUP BY table_schema, table_name ORDER BY table_schema, table_name
                    """).map { try $0.decode(String.self, "grant") }
            }
            #expect(tables == ["cutover.migration_state: SELECT", "cutover.schema_version: SELECT", "public.drafts: INSERT, SELECT, UPDATE"])
            let refused = try await roles.asApplication { app in
                ["SELECT count(*) FROM cutover.operation_ledger",
                 "INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'error', 1000000)",
                 "SELECT cutover.reader_heartbeat('old-web', 'web', '3.0', ARRAY['v2'])"]
                    .map { statement in RolesTests.failure { try app.execute(unsafeSQL: statement) }?.sqlState }
            }
            #expect(refused == [.insufficientPrivilege, .insufficientPrivilege, .undefinedFunction])

            // The application goes on: a retry of what it saved before the upgrade replays, a new
            // save commits, its counts and its heartbeat are accepted.
            let retried = try await roles.asApplication { app in
                try app.query("""
                    SELECT outcome FROM cutover.save_draft('account-42', 'op-1', '\\x01', 'draft-1', 0, 'legacy', 'Before', NULL, 1000)
                    """)[0].decode(String.self, "outcome")
            }
            #expect(retried == "replayed")
            let pool = PostgresPool(configuration: roles.configuration(roles.app), maximumConnections: 2)
            let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
            let adapter = LegacyDraftAdapter(storage: store)
            let next = SaveDraft(operationScope: "account-42", operationID: "op-2", draftID: "draft-1", expectedRevision: 1,
                                 content: DraftContent(title: "After"))
            #expect(try await adapter.saveReportingOutcome(next).outcome == .committed)
            #expect(try await adapter.saveReportingOutcome(next).outcome == .replayed)
            try await store.outcomes.flush()
            let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "new-web", applicationName: "web",
                                                            applicationVersion: "4.0", formats: [.v1, .v2])
            let (committed, readers) = try await roles.admin { connection in
                (try connection.query("SELECT sum(count)::bigint AS n FROM cutover.outcome_log WHERE outcome = 'committed'")[0]
                    .decode(Int64.self, "n"),
                 try ReaderRegistry.list(plan: "drafts", on: connection).map(\.instanceID))
            }
            #expect(committed == 1)
            #expect(readers == ["new-web", "old-web"])
            try await registration.stop()
            try await store.outcomes.close()
            await pool.shutdown()
        }
    }
}
