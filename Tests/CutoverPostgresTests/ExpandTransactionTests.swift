import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// What expand's one transaction leaves to the statements after it in the same transaction, as
/// the runner's making of the plan's save function: function bodies checked, and the session's
/// own search_path.
@Suite("Expand's transaction")
struct ExpandTransactionTests {
    @Test("a function made after expand's statements, in its transaction, has its body checked and the session's search_path",
          .timeLimit(.minutes(2)))
    func functionBodiesAreCheckedAgainAfterTheRowFunctions() async throws {
        let database = try await TestPostgres.database("expand_function_bodies")
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: "CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL)")
            let compiled = try DeclarativePlan(manifest: Array(DeclarativeSyncTriggerTests.manifest.utf8)).compile()
            let expand = try #require(compiled.fileTexts["compiled/expand.sql"])
            // Expand pins the search_path while it makes the row functions.
            #expect(expand.contains("PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);"))
            try connection.execute(unsafeSQL: "SET search_path = public, \"$user\"")
            try connection.execute(unsafeSQL: "BEGIN")
            try connection.execute(unsafeSQL: expand)
            let path = try connection.query("SELECT current_setting('search_path') AS path")[0].decode(String.self, "path")
            let error = #expect(throws: PostgresError.self) {
                try connection.execute(unsafeSQL: "CREATE FUNCTION cutover_unchecked() RETURNS bigint LANGUAGE sql AS 'SELECT no_such_column FROM no_such_table'")
            }
            try connection.execute(unsafeSQL: "ROLLBACK")
            #expect(path == "public, \"$user\"")
            #expect(error?.sqlState == .undefinedTable)
        }
    }
}
