import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// The upgrade from control schema 7 makes every plan's save function again from version 8's
/// text, and the operations saved before it keep their ledger entries.
@Suite("Plans' save functions across the upgrade from control schema 7")
struct SaveFunctionUpgradeTests {
    /// One legacy save of draft-7, as plain SQL, through the plan's own function or (`viaEntry`)
    /// through `cutover.save_record`; its outcome and revision, or the SQLSTATE it raised.
    private static func save(_ connection: PostgresConnection, viaEntry: Bool = false, operation: String,
                             expected: Int64, title: String) -> String {
        do {
            let call = viaEntry ? "cutover.save_record('drafts', " : "cutover.save_record_drafts("
            let row = try connection.query("""
                SELECT outcome, revision FROM \(unsafeRaw: call)'account-1', \(operation), '{"id": "draft-7"}'::jsonb,
                                                                   \(expected), 'legacy', jsonb_build_object('title', \(title)::text))
                """)[0]
            return "\(try row.decode(String.self, "outcome")) \(try row.decode(Int64?.self, "revision").map(String.init) ?? "-")"
        } catch let error as PostgresError {
            return error.sqlState?.rawValue ?? "\(error)"
        } catch {
            return "\(error)"
        }
    }

    /// The source of the drafts plan's save function.
    private static func source(_ connection: PostgresConnection) throws -> String {
        try connection.query("SELECT prosrc FROM pg_proc WHERE oid = 'cutover.save_record_drafts'::regproc")[0]
            .decode(String.self, "prosrc")
    }

    @Test(.timeLimit(.minutes(3)))
    func theUpgradeMakesThePlansFunctionsAgainAndTheirOperationsStillReplay() async throws {
        try await Roles.withRoles("save_fn_from_7") { roles in
            try await roles.installAsMigrator(version: 7, schema: ControlSchemaVersion7.schema, grants: ControlSchemaVersion7.grants)
            let before = try await roles.asApplication { app in
                [Self.save(app, operation: "create", expected: 0, title: "Plan"),
                 Self.save(app, viaEntry: true, operation: "edit", expected: 1, title: "Plan, revised")]
            }
            #expect(before == ["committed 1", "committed 2"])
            // Closures stay out of #expect here: on Swift 6.3, a closure inside a macro's argument
            // within a closure can take the name of the next closure of the same type, which
            // then runs the first one's body. Version 7's text keeps the predicted revision in a
            // variable of its own.
            let version7Text = try await roles.admin { try Self.source($0) }
            #expect(version7Text.contains("v_predicted :="))

            #expect(try await roles.upgradeAsMigrator() == .installed(from: 7))

            let (text, oldTemplate, registered) = try await roles.admin { connection in
                (try Self.source(connection),
                 try connection.query("""
                     SELECT to_regprocedure('cutover.record_save_source(text, text, text, text, text, text, text)') IS NULL AS gone
                     """)[0].decode(Bool.self, "gone"),
                 try connection.query("SELECT save_function FROM cutover.record_plans WHERE plan = 'drafts'")[0]
                     .decode(String?.self, "save_function"))
            }
            #expect(text.contains("IF p_request IS NULL THEN"))
            #expect(!text.contains("v_predicted"))
            #expect(oldTemplate)
            #expect(registered == "cutover.save_record_drafts")

            // What version 7 committed is still the ledger's: a retry replays, another request
            // under the same ID is refused, a stale revision conflicts, and the next save commits.
            let after = try await roles.asApplication { app in
                [Self.save(app, operation: "edit", expected: 1, title: "Plan, revised"),
                 Self.save(app, operation: "create", expected: 0, title: "Another plan"),
                 Self.save(app, operation: "stale", expected: 1, title: "Stale"),
                 Self.save(app, operation: "next", expected: 2, title: "Plan, final")]
            }
            #expect(after == ["replayed 2", "operationConflict -", "CU001", "committed 3"])
            let stored = try await roles.admin { connection in
                try connection.query("SELECT title || ' ' || revision AS row FROM drafts WHERE id = 'draft-7'")[0].decode(String.self, "row")
            }
            #expect(stored == "Plan, final 3")
            #expect(try await roles.reinstallAsMigrator() == .current)
        }
    }
}
