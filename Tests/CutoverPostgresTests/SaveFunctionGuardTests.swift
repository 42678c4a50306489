import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// What the save and read functions, which run as the control schema's owner, refuse to do:
/// write or read for a role that may not do it itself or that row-level security holds,
/// write without the operation's claim,
/// take a NULL key or a NULL revision for something else, and take values in an order the
/// function no longer has.
@Suite("What the save functions refuse", .timeLimit(.minutes(3)))
struct SaveFunctionGuardTests {
    /// A call of `sql` on `connection`: its first row's outcome and revision, or what it raised.
    private static func answer(_ connection: PostgresConnection, _ sql: String) -> RecordSaveFunctionTests.Answer {
        RecordSaveFunctionTests.answer { try connection.query(PostgresQuery(unsafeSQL: sql))[0] }
    }

    /// The sqlstate `answer` raised, or nil for a row.
    private static func raised(_ answer: RecordSaveFunctionTests.Answer) -> String? {
        if case .raised(let state, _) = answer { state } else { nil }
    }

    /// Expects both stores, on a pool of `configuration`, to refuse a create of `key` with
    /// `refusal` as their own error, and the record store a read of it with `readRefusal`.
    private static func expectStoresRefuse(_ configuration: PostgresConfiguration, key: String, refusal: String,
                                           readRefusal: String) async throws {
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        let drafts = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        await #expect(throws: DraftStoreError.notPermitted(refusal)) {
            _ = try await LegacyDraftAdapter(storage: drafts).save(SaveDraft(
                operationScope: "s", operationID: "store-1", draftID: key, expectedRevision: 0, content: DraftContent(title: "T")))
        }
        let records = try await PostgresRecordStore<DraftRecords>(pool: pool, outcomeFlushInterval: nil)
        await #expect(throws: RecordStoreError.notPermitted(refusal)) {
            _ = try await RecordAdapter(storage: records, path: .legacy).save(SaveRequest<DraftRecords>(
                operationScope: "s", operationID: "store-2", key: RecordKey(.text(key)), expectedRevision: 0,
                content: DraftContent(title: "T")))
        }
        await #expect(throws: RecordStoreError.notPermitted(readRefusal)) {
            _ = try await records.record(RecordKey(.text(key)))
        }
        await pool.shutdown()
    }

    private static let document = #"{"version": "2", "title": "T", "body": "", "tags": []}"#

    /// A role granted the functions but not the table may neither save nor read through them,
    /// whichever function it calls; with column privileges on what a save writes it may; and a
    /// session that may not write itself may once SET ROLE has made a role that may current.
    @Test func aRoleThatMayNotWriteTheTableSavesAndReadsNothingThroughTheFunctions() async throws {
        try await Roles.withRoles("save_guard_roles") { roles in
            try await roles.installAsMigrator()
            let app = roles.app
            let outsider = "cutover_outsider_\(UUID().uuidString.prefix(8).lowercased())"
            try await roles.admin { connection in
                let role = try connection.quoteIdentifier(app)
                try connection.execute(unsafeSQL: """
                    REVOKE SELECT, INSERT, UPDATE ON drafts FROM \(role);
                    CREATE ROLE \(try connection.quoteIdentifier(outsider)) LOGIN NOINHERIT PASSWORD '\(roles.password)' IN ROLE \(role);
                    GRANT USAGE ON SCHEMA cutover TO \(try connection.quoteIdentifier(outsider));
                    GRANT EXECUTE ON FUNCTION cutover.save_draft(text, text, bytea, text, bigint, text, text, jsonb, integer)
                        TO \(try connection.quoteIdentifier(outsider));
                    """)
            }

            // The stores say why, as their own errors.
            let refusal = "role \(app) may not insert into public.drafts, so it may not save there either"
            try await Self.expectStoresRefuse(roles.configuration(app), key: "d-1", refusal: refusal,
                                              readRefusal: "role \(app) may not read public.drafts, so it may not read its records either")

            // And every function called by hand: the JSON entry, the path's own, the drafts one.
            let calls = try await roles.asApplication { connection in
                let modern = try connection.query("SELECT legacy_save_function AS f FROM cutover.record_plans WHERE plan = 'drafts'")[0]
                    .decode(String.self, "f")
                return [
                    Self.answer(connection, """
                        SELECT * FROM cutover.save_record('drafts', 's', 'op-3', '{"id": "d-3"}', 0, 'legacy', '{"title": "T"}')
                        """),
                    Self.answer(connection, "SELECT * FROM \(modern)('s', 'op-4', 'd-4', 0, 'T', '\\x00')"),
                    Self.answer(connection, """
                        SELECT * FROM cutover.save_draft('s', 'op-5', '\\x00', 'd-5', 0, 'legacy', 'T', NULL, NULL)
                        """),
                    // Columns no path's function takes: save_record_dynamic.
                    Self.answer(connection, """
                        SELECT * FROM cutover.save_record('drafts', 's', 'op-8', '{"id": "d-8"}', 0, 'modern', '{"title": "T"}')
                        """),
                ]
            }
            #expect(calls == Array(repeating: .raised("CU007", refusal), count: 4))
            let written = try await roles.admin { connection in
                try connection.query("SELECT (SELECT count(*) FROM drafts) + (SELECT count(*) FROM cutover.operation_ledger) AS n")[0]
                    .decode(Int64.self, "n")
            }
            #expect(written == 0)

            // Column privileges on exactly what a legacy create writes are enough.
            try await roles.admin { connection in
                try connection.execute(unsafeSQL: "GRANT INSERT (id, title, revision) ON drafts TO \(try connection.quoteIdentifier(app))")
            }
            let granted = try await roles.asApplication { connection in
                Self.answer(connection, "SELECT * FROM cutover.save_draft('s', 'op-6', '\\x00', 'd-6', 0, 'legacy', 'T', NULL, NULL)")
            }
            #expect(granted == .row("committed", 1))

            // A session whose own role may not write, until SET ROLE makes the application's current.
            let configuration = roles.configuration(outsider)
            let (before, after) = try await onThread {
                let connection = try PostgresConnection(configuration: configuration)
                let call = "SELECT * FROM cutover.save_draft('s', 'op-7', '\\x00', 'd-7', 0, 'legacy', 'T', NULL, NULL)"
                let before = Self.answer(connection, call)
                try connection.execute(unsafeSQL: "SET ROLE \(try connection.quoteIdentifier(app))")
                return (before, Self.answer(connection, call))
            }
            #expect(before == .raised("CU007", "role \(outsider) may not insert into public.drafts, so it may not save there either"))
            #expect(after == .row("committed", 1))
            try await roles.admin { connection in
                let role = try connection.quoteIdentifier(outsider)
                try connection.execute(unsafeSQL: "DROP OWNED BY \(role); DROP ROLE \(role)")
            }
        }
    }

    /// Row-level security that holds the calling role refuses every save and read through the
    /// functions, which run as the schema's owner and would not apply its policies; a role
    /// that bypasses it, one with the privileges of the table's owner (until the table forces
    /// its policies on the owner too) and every role once it is disabled save again, and none
    /// once it is enabled again: each seen by the same session, through save_draft and the
    /// path's own function, whose plans must follow every change of the table.
    @Test func rowLevelSecurityThatHoldsTheCallerRefusesEverySaveAndRead() async throws {
        try await Roles.withRoles("save_guard_rls") { roles in
            try await roles.installAsMigrator()
            let app = roles.app
            let migrator = roles.migrator
            let appConfiguration = roles.configuration(app)
            let database = roles.database
            let refusal = "role \(app) is held to row-level security on public.drafts, which a save through Cutover would not apply, so it may not save there"
            let readRefusal = "role \(app) is held to row-level security on public.drafts, which a read through Cutover would not apply, so it may not read its records"
            let outcome = try await onThread {
                let admin = try database.connect()
                let quotedApp = try admin.quoteIdentifier(app)
                // The table's owner, as the runbook's roles have it.
                let quotedOwner = try admin.quoteIdentifier(migrator)
                try admin.execute(unsafeSQL: """
                    INSERT INTO drafts (id, title, revision) VALUES ('mine-0', 'T', 1);
                    ALTER TABLE drafts ENABLE ROW LEVEL SECURITY;
                    CREATE POLICY only_mine ON drafts TO \(quotedApp) USING (id LIKE 'mine-%') WITH CHECK (id LIKE 'mine-%');
                    """)
                let connection = try PostgresConnection(configuration: appConfiguration)
                let pathFunction = try connection.query("SELECT legacy_save_function AS f FROM cutover.record_plans WHERE plan = 'drafts'")[0]
                    .decode(String.self, "f")
                var operation = 0
                // A create of `id` through save_draft and through the path's own function.
                func saveBoth(_ id: String) -> [RecordSaveFunctionTests.Answer] {
                    operation += 1
                    return [
                        Self.answer(connection, "SELECT * FROM cutover.save_draft('s', 'op-\(operation)', '\\x00', '\(id)-a', 0, 'legacy', 'T', NULL, NULL)"),
                        Self.answer(connection, "SELECT * FROM \(pathFunction)('s', 'op-\(operation)-b', '\(id)-b', 0, 'T', '\\x00')"),
                    ]
                }
                // Even a row the policy would let it write: the save cannot tell.
                let refused = [
                    saveBoth("mine-1")[0],
                    Self.answer(connection, """
                        SELECT * FROM cutover.save_record('drafts', 's', 'op-r1', '{"id": "mine-2"}', 0, 'legacy', '{"title": "T"}')
                        """),
                    Self.answer(connection, "SELECT * FROM \(pathFunction)('s', 'op-r2', 'mine-3', 0, 'T', '\\x00')"),
                    Self.answer(connection, """
                        SELECT * FROM cutover.save_record('drafts', 's', 'op-r3', '{"id": "mine-4"}', 0, 'modern', '{"title": "T"}')
                        """),
                    // An update of a row it may see, through the path's own function.
                    Self.answer(connection, "SELECT * FROM \(pathFunction)('s', 'op-r4', 'mine-0', 1, 'T2', '\\x00')"),
                ]
                let read: String
                do {
                    _ = try connection.query("SELECT * FROM cutover.read_record('drafts', '{\"id\": \"other\"}')")
                    read = "read"
                } catch let error as PostgresError {
                    read = (error.sqlState?.rawValue ?? "") + ": " + error.message
                }
                let written = try admin.query("SELECT (SELECT count(*) FROM drafts) + (SELECT count(*) FROM cutover.operation_ledger) AS n")[0]
                    .decode(Int64.self, "n")

                try admin.execute(unsafeSQL: "ALTER ROLE \(quotedApp) BYPASSRLS")
                let bypassing = saveBoth("other-1")
                try admin.execute(unsafeSQL: """
                    ALTER ROLE \(quotedApp) NOBYPASSRLS;
                    GRANT \(quotedOwner) TO \(quotedApp);
                    """)
                let asOwner = saveBoth("other-2")
                try admin.execute(unsafeSQL: "ALTER TABLE drafts FORCE ROW LEVEL SECURITY")
                let forced = saveBoth("other-3")
                try admin.execute(unsafeSQL: "ALTER TABLE drafts NO FORCE ROW LEVEL SECURITY; REVOKE \(quotedOwner) FROM \(quotedApp)")
                let heldAgain = saveBoth("other-4")
                try admin.execute(unsafeSQL: "ALTER TABLE drafts DISABLE ROW LEVEL SECURITY")
                let disabled = saveBoth("other-5")
                // Enabled again: the functions' plans made while it was off must not stand.
                try admin.execute(unsafeSQL: "ALTER TABLE drafts ENABLE ROW LEVEL SECURITY")
                let enabledAgain = saveBoth("other-6")
                return (refused: refused, read: read, written: written,
                        afterChanges: [bypassing, asOwner, forced, heldAgain, disabled, enabledAgain])
            }
            #expect(outcome.refused == Array(repeating: .raised("CU007", refusal), count: 5))
            #expect(outcome.read == "CU007: " + readRefusal)
            #expect(outcome.written == 1, "only the row the test wrote: nothing saved, nothing claimed")
            let committed = RecordSaveFunctionTests.Answer.row("committed", 1)
            let held = RecordSaveFunctionTests.Answer.raised("CU007", refusal)
            #expect(outcome.afterChanges == [[committed, committed], [committed, committed], [held, held], [held, held], [committed, committed],
                                  [held, held]])

            // The stores say so as their own errors.
            try await Self.expectStoresRefuse(appConfiguration, key: "mine-9", refusal: refusal, readRefusal: readRefusal)
        }
    }

    /// A claim that neither goes in nor is found, three times over (pruned each time from under
    /// the save), fails the save: no write goes ahead without its claim. A trigger that drops
    /// the claim's row stands in for the pruning.
    @Test func noWriteGoesAheadWithoutItsClaim() async throws {
        let db = try await StoreDatabase.make("save_guard_claim", layout: .expanded)
        let answers = try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE FUNCTION public.claim_vanishes() RETURNS trigger LANGUAGE plpgsql
                AS $$ BEGIN RETURN CASE WHEN NEW.operation_id LIKE 'vanishing-%' THEN NULL ELSE NEW END; END $$;
                CREATE TRIGGER claim_vanishes BEFORE INSERT ON cutover.operation_ledger
                    FOR EACH ROW EXECUTE FUNCTION public.claim_vanishes();
                SELECT cutover.make_record_save('drafts');
                """)
            let modern = try connection.query("SELECT modern_save_function AS f FROM cutover.record_plans WHERE plan = 'drafts'")[0]
                .decode(String.self, "f")
            return [
                Self.answer(connection, "SELECT * FROM cutover.save_draft('s', 'vanishing-1', '\\x00', 'v-1', 0, 'legacy', 'T', NULL, NULL)"),
                Self.answer(connection, "SELECT * FROM \(modern)('s', 'vanishing-2', 'v-2', 0, '\(Self.document)', '\\x00')"),
                // Both paths' columns at once: save_record_dynamic.
                Self.answer(connection, """
                    SELECT * FROM cutover.save_record('drafts', 's', 'vanishing-3', '{"id": "v-3"}', 0, 'modern',
                                                      jsonb_build_object('title', 'T', 'document', CAST('\(Self.document)' AS jsonb)))
                    """),
            ]
        }
        #expect(answers.map(Self.raised) == ["40001", "40001", "40001"], "\(answers)")
        let written = try await db.sql { connection in
            try connection.query("SELECT count(*) AS n FROM drafts WHERE id LIKE 'v-%'")[0].decode(Int64.self, "n")
        }
        #expect(written == 0)
        await db.close()
    }

    /// A NULL key value is refused on every path; a row whose revision is NULL is said to be
    /// so, not missing; a key column named like one of the save function's variables saves
    /// through save_record_dynamic.
    @Test func nullKeysNullRevisionsAndKeysNamedLikeTheFunctionsVariables() async throws {
        let database = try await TestPostgres.database("save_guard_values")
        let answers = try await onThread {
            let connection = try database.connect()
            try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: """
                CREATE TABLE codes (code text UNIQUE, label text, note text);
                SELECT cutover.register_record_plan('codes', 'codes', ARRAY['code'], NULL, ARRAY['label'], ARRAY['note']);
                CREATE TABLE counted (id int PRIMARY KEY, label text, revision bigint);
                INSERT INTO counted VALUES (1, 'a', NULL);
                SELECT cutover.register_record_plan('counted', 'counted', ARRAY['id'], 'revision', ARRAY['label'], NULL);
                CREATE TABLE tagged (revision int PRIMARY KEY, label text);
                SELECT cutover.register_record_plan('tagged', 'tagged', ARRAY['revision'], NULL, ARRAY['label'], NULL);
                """)
            func save(_ plan: String, _ operation: String, _ key: String, _ expected: Int64, _ path: String, _ columns: String)
                -> RecordSaveFunctionTests.Answer {
                Self.answer(connection, """
                    SELECT * FROM cutover.save_record('\(plan)', 's', '\(operation)', '\(key)', \(expected), '\(path)', '\(columns)')
                    """)
            }
            let tagged = try connection.query("SELECT legacy_save_function AS f FROM cutover.record_plans WHERE plan = 'tagged'")[0]
                .decode(String?.self, "f")
            return (nullKey: [save("codes", "n-1", #"{"code": null}"#, 0, "legacy", #"{"label": "a"}"#),
                              save("codes", "n-2", #"{"code": null}"#, 0, "legacy", #"{"label": "a", "note": "b"}"#)],
                    nullRevision: [save("counted", "r-1", #"{"id": 1}"#, 1, "legacy", #"{"label": "b"}"#),
                                   save("counted", "r-2", #"{"id": 1}"#, 0, "legacy", #"{"label": "b"}"#)],
                    taggedFunction: tagged,
                    taggedSaves: [save("tagged", "t-1", #"{"revision": 5}"#, 0, "legacy", #"{"label": "a"}"#),
                                  save("tagged", "t-1", #"{"revision": 5}"#, 0, "legacy", #"{"label": "a"}"#)],
                    rows: try connection.query("SELECT (SELECT count(*) FROM codes) AS codes, (SELECT count(*) FROM tagged) AS tagged")[0])
        }
        #expect(answers.nullKey.map(Self.raised) == ["22023", "22023"], "\(answers.nullKey)")
        #expect(answers.nullRevision == Array(repeating: .raised("CU006", "the record's revision is NULL: give it one (such as 1) before saving it"),
                                              count: 2))
        #expect(answers.taggedFunction == nil)
        #expect(answers.taggedSaves.map { if case .row(let outcome, _) = $0 { outcome } else { "\($0)" } } == ["committed", "replayed"])
        #expect(try answers.rows.decode(Int64.self, "codes") == 0 && answers.rows.decode(Int64.self, "tagged") == 1)
    }

    /// A registration that changes the order of a path's columns makes a function of another
    /// name and drops the old one: a caller still filling in the old order finds no function,
    /// and nothing is written, where it would have written each value into the other column.
    @Test func aFunctionWhoseColumnsChangedOrderTakesAnotherName() async throws {
        let database = try await TestPostgres.database("save_guard_order")
        let (first, second, stale, row) = try await onThread {
            let connection = try database.connect()
            try ControlSchema.install(on: connection)
            func function() throws -> String {
                try connection.query("SELECT legacy_save_function AS f FROM cutover.record_plans WHERE plan = 'pair'")[0].decode(String.self, "f")
            }
            try connection.execute(unsafeSQL: """
                CREATE TABLE pair (id int PRIMARY KEY, a text, b text);
                SELECT cutover.register_record_plan('pair', 'pair', ARRAY['id'], NULL, ARRAY['a', 'b'], NULL);
                """)
            let first = try function()
            // The old order: a, then b.
            let call = { (name: String, operation: String) in
                Self.answer(connection, "SELECT * FROM \(name)('s', '\(operation)', '1', 0, 'value of a', 'value of b', '\\x00')")
            }
            _ = call(first, "o-1")
            try connection.execute(unsafeSQL: "SELECT cutover.register_record_plan('pair', 'pair', ARRAY['id'], NULL, ARRAY['b', 'a'], NULL)")
            let second = try function()
            let stale = call(first, "o-2")
            return (first, second, stale, try connection.query("SELECT a, b FROM pair")[0])
        }
        #expect(first != second)
        #expect(Self.raised(stale) == "42883", "\(stale)")
        #expect(try row.decode(String.self, "a") == "value of a" && row.decode(String.self, "b") == "value of b")
    }
}
