import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The sync trigger runs as its owner under the caller's `search_path`, with no `SET` of its
/// own: every name it and the plan's expressions use was resolved when expand made them.
@Suite("The sync trigger's names, resolved when expand made them")
struct SyncTriggerNamesTests {
    /// A role that may write the table and create in a schema of its own puts there an `=` for
    /// text that always answers true and its own `current_setting`, `to_char` and `now`, each
    /// recording that it ran, and puts that schema first on its path. Its plain statement
    /// shows the path would redirect an unqualified name; its writes through the trigger
    /// still get what the plan says, the legacy write is still recorded, and nothing of its
    /// own runs there, as the trigger's owner or as itself.
    @Test(.timeLimit(.minutes(2)))
    func aRoleThatPutsItsOwnOperatorAndFunctionsFirstOnItsPathChangesNothingTheTriggerDoes() async throws {
        let database = try await TestPostgres.database("sync_trigger_names")
        try await onThread {
            let connection = try database.connect()
            try DeclarativeSyncTriggerTests.expandedOrders(3, on: connection)
            let intruder = "cutover_intruder_\(UUID().uuidString.prefix(8).lowercased())"
            let schema = intruder + "_own"
            defer {
                _ = try? connection.execute(unsafeSQL: "RESET ROLE; RESET search_path; DROP SCHEMA IF EXISTS \(schema) CASCADE; DROP OWNED BY \(intruder); DROP ROLE IF EXISTS \(intruder)")
            }
            func recording(_ value: String) -> String {
                "$$ INSERT INTO \(schema).calls VALUES (current_user) RETURNING \(value) $$"
            }
            try connection.execute(unsafeSQL: """
                CREATE ROLE \(intruder) NOLOGIN;
                GRANT SELECT, INSERT, UPDATE ON orders TO \(intruder);
                CREATE SCHEMA \(schema) AUTHORIZATION \(intruder);
                SET ROLE \(intruder);
                CREATE TABLE \(schema).calls (called_as text);
                CREATE FUNCTION \(schema).always(text, text) RETURNS boolean LANGUAGE sql AS \(recording("true"));
                CREATE OPERATOR \(schema).= (LEFTARG = text, RIGHTARG = text, FUNCTION = \(schema).always);
                CREATE FUNCTION \(schema).current_setting(text, boolean) RETURNS text LANGUAGE sql AS \(recording("'modern'::text"));
                CREATE FUNCTION \(schema).to_char(timestamptz, text) RETURNS text LANGUAGE sql AS \(recording("'same'::text"));
                CREATE FUNCTION \(schema).now() RETURNS timestamptz LANGUAGE sql AS \(recording("'2000-01-01'::timestamptz"));
                SET search_path = \(schema), pg_catalog
                """)
            // The path does redirect the role's own unqualified SQL.
            #expect(try connection.query("SELECT 'a' = 'b' AS hijacked")[0].decode(Bool.self, "hijacked"))

            try connection.execute(unsafeSQL: """
                UPDATE public.orders SET status = 'paid' WHERE id = 1;
                INSERT INTO public.orders (id, status) VALUES (4, 'shipped');
                UPDATE public.orders SET status_code = 3 WHERE id = 2
                """)
            try connection.execute(unsafeSQL: "RESET ROLE; RESET search_path")
            let rows = try connection.query("SELECT id, status, status_code FROM orders ORDER BY id").map {
                "\(try $0.decode(Int64.self, "id")) \(try $0.decode(String.self, "status")) \(try $0.decode(Int16?.self, "status_code").map(String.init) ?? "NULL")"
            }
            #expect(rows == ["1 paid 2", "2 shipped 3", "3 new NULL", "4 shipped 3"])
            let noted = try connection.query("""
                SELECT last_write_at > '2001-01-01' AS noted FROM cutover.legacy_activity WHERE table_name = 'public.orders'
                """)[0].decode(Bool.self, "noted")
            #expect(noted, "the legacy writes were recorded at the server's time")
            let calls = try connection.query(PostgresQuery(unsafeSQL: "SELECT called_as FROM \(schema).calls")).map { try $0.decode(String.self, "called_as") }
            #expect(calls == [intruder], "only the role's own plain statement ran its operator")
        }
    }
}
