import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// A plan whose names and expressions hold the tags the compiler quotes its blocks with
/// (`$cutover$` in the table's name, `$pinned$` in the legacy column's, `$definition$` in the
/// modern column's, `$probe$` and `$cutover$` in a literal of an expression): each block is quoted by a tag it
/// does not hold, so that no name or expression can end it early and have the rest run as SQL.
@Suite("Names and expressions holding the compiler's dollar-quote tags")
struct DollarQuotedNamesTests {
    static let manifest = #"""
        {"format": 2, "name": "tags", "table": "t$cutover$", "key": "id",
         "operations": [{"alter_column": {"from": "title$pinned$",
           "to": {"name": "doc$definition$", "type": "text"},
           "up": "title$pinned$ || '$probe$cutover$'",
           "down": "left(doc$definition$, -15)"}}]}
        """#

    /// The compiled blocks choose other tags than the ones their bodies hold.
    @Test func eachBlockIsQuotedByATagItsBodyDoesNotHold() throws {
        let compiled = try DeclarativePlan(manifest: Array(Self.manifest.utf8)).compile()
        let expand = try #require(compiled.fileTexts["compiled/expand.sql"])
        #expect(expand.contains("AS $cutover_1$"), "the trigger's function holds 't$cutover$' in a literal")
        #expect(expand.contains("DO $pinned_1$"), "the row functions' block holds title$pinned$")
        #expect(expand.contains("pg_catalog.format($definition_1$"), "a row function's definition holds doc$definition$")
        #expect(compiled.expressionProbe.contains { $0.sql.hasPrefix("DO $probe$") })
        #expect(compiled.expressionProbe.contains { $0.sql.hasPrefix("DO $pinned_1$") })
    }

    /// On a real server: the expression probe passes, expand applies, the trigger mirrors the old
    /// and the new application's writes, and the backfill converts the rest.
    @Test(.timeLimit(.minutes(3)))
    func theProbeExpandTheTriggerAndTheBackfillWork() async throws {
        let database = try await TestPostgres.database("dollar_quoted_names")
        let (probeErrors, rows, left) = try await onThread { () throws -> ([String], [String], Int64) in
            let connection = try database.connect()
            let compiled = try DeclarativePlan(manifest: Array(Self.manifest.utf8)).compile()
            try connection.execute(unsafeSQL: #"""
                CREATE TABLE "t$cutover$" (id bigint PRIMARY KEY, "title$pinned$" text NOT NULL);
                INSERT INTO "t$cutover$" SELECT n, 'row ' || n FROM generate_series(1, 5) AS n
                """#)
            var probeErrors: [String] = []
            try connection.execute(unsafeSQL: "BEGIN")
            for statement in compiled.expressionProbe {
                do { try connection.execute(unsafeSQL: statement.sql) } catch {
                    probeErrors.append("\(statement.subject): \(error)")
                    break
                }
            }
            try connection.execute(unsafeSQL: "ROLLBACK")
            let steps = try CompiledSteps.expanded(Self.manifest, on: connection, after: "SELECT 1")
            try connection.execute(unsafeSQL: #"""
                INSERT INTO "t$cutover$" (id, "title$pinned$") VALUES (10, 'old');
                INSERT INTO "t$cutover$" (id, "doc$definition$") VALUES (11, 'new$probe$cutover$');
                UPDATE "t$cutover$" SET "title$pinned$" = 'renamed' WHERE id = 1;
                UPDATE "t$cutover$" SET "doc$definition$" = 'moved$probe$cutover$' WHERE id = 2
                """#)
            let left = try steps.backfill(batchSize: 2)
            let rows = try connection.query(#"""
                SELECT id || ' ' || "title$pinned$" || ' ' || coalesce("doc$definition$", '-') AS row FROM "t$cutover$" ORDER BY id
                """#).map { try $0.decode(String.self, "row") }
            return (probeErrors, rows, left)
        }
        #expect(probeErrors.isEmpty, "\(probeErrors)")
        #expect(rows == [
            "1 renamed renamed$probe$cutover$", "2 moved moved$probe$cutover$", "3 row 3 row 3$probe$cutover$",
            "4 row 4 row 4$probe$cutover$", "5 row 5 row 5$probe$cutover$", "10 old old$probe$cutover$",
            "11 new new$probe$cutover$",
        ])
        #expect(left == 0)
    }
}
