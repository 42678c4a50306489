import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// How a compiled plan counts the rows its backfill has still to convert: with the plan's
/// expressions written out, not a row function called for every row, and under the row
/// functions' own `search_path`, so that what the caller's path holds cannot change the count.
@Suite("The count of rows still to convert")
struct BackfillRemainingCountTests {
    static let manifest = """
        {"format": 2, "name": "people-name-lower", "table": "people", "key": "id",
         "operations": [{"alter_column": {"from": "name", "to": {"name": "name_lower", "type": "text"},
           "up": "nullif(lower(name), 'skip')", "down": "name_lower"}}]}
        """

    @Test("counts without calling the row function, and ignores a better-matching function on the caller's search_path",
          .timeLimit(.minutes(2)))
    func countsWithTheExpressionUnderThePinnedPath() async throws {
        let database = try await TestPostgres.database("remaining_count")
        try await onThread {
            let connection = try database.connect()
            let steps = try CompiledSteps.expanded(Self.manifest, on: connection, after: """
                CREATE TABLE people (id bigint PRIMARY KEY, name varchar(40) NOT NULL);
                INSERT INTO people SELECT n, CASE WHEN n <= 2 THEN 'SKIP' ELSE 'Name ' || n END FROM generate_series(1, 10) AS n
                """)
            let remaining = try #require(steps.compiled.fileTexts["compiled/backfill_remaining.sql"])
            // A role that can create in public gives lower(varchar) a better match than
            // pg_catalog.lower(text) for every session whose search_path reaches public.
            try connection.execute(unsafeSQL: """
                CREATE FUNCTION public.lower(varchar) RETURNS text LANGUAGE sql AS 'SELECT NULL::text';
                SET track_functions = 'all'
                """)
            #expect(try connection.query("SELECT count(*) AS n FROM people WHERE lower(name) IS NULL")[0].decode(Int64.self, "n") == 10)
            let counted = try connection.withTransaction { connection in
                let left = try connection.query(PostgresQuery(unsafeSQL: remaining))[0].decode(Int64.self, at: 0)
                let calls = try connection.query("""
                    SELECT coalesce(sum(calls), 0)::bigint AS calls FROM pg_stat_xact_user_functions
                     WHERE schemaname = 'cutover' AND funcname LIKE 'people_name_lower%'
                    """)[0].decode(Int64.self, "calls")
                return (left, calls)
            }
            // The two rows whose expression gives NULL are not counted; the eight others are,
            // by pg_catalog.lower, and no row function was called for them.
            #expect(counted.0 == 8)
            #expect(counted.1 == 0)
            #expect(try steps.backfill(batchSize: 3) == 0)
            #expect(try connection.query("SELECT count(*) AS n FROM people WHERE name_lower IS NOT NULL")[0].decode(Int64.self, "n") == 8)
        }
    }
}
