import CutoverTestSupport
import Foundation
import Testing

/// `phase compare` on example plans other than drafts, through the built binary: the two
/// representations agree after expand and backfill, and a row made to disagree on purpose
/// (its sync trigger off for one UPDATE, as an operator with a bug would) is named by its
/// whole key and its columns, its values hidden unless asked.
@Suite("phase compare on any plan", .timeLimit(.minutes(5)))
struct CompareCommandTests {
    /// Expands, switches and backfills `example`'s database, comparing on the way.
    func backfilled(_ workload: ExampleWorkload) async throws -> ExampleDatabase {
        let example = try await ExampleDatabase.make(workload)
        try await example.phase("init")
        let early = try await example.phase("compare", status: 3)
        #expect(early.output.isEmpty)
        #expect(early.diagnostics.contains("cannot compare plan \(workload.folder) in phase baseline: the modern columns do not exist before expand"),
                "\(early.diagnostics)")
        try await example.phase("expand")
        // Seeded before expand: nothing is converted yet, and that is no disagreement.
        let expanded = try await example.phase("compare")
        #expect(expanded.output.contains("compared 0 of 1000 rows sampled from "), "\(expanded.output)")
        #expect(expanded.output.contains("(1000 not converted yet)\nno disagreement\n"), "\(expanded.output)")
        try await example.phase("switch", "modern", "--force-readers")
        try await example.phase("backfill")
        let all = try await example.phase("compare", "--all")
        #expect(all.output.contains("compared \(ExampleWorkload.rows) of \(ExampleWorkload.rows) rows of "), "\(all.output)")
        #expect(all.output.hasSuffix("(0 not converted yet)\nno disagreement\n"), "\(all.output)")
        return example
    }

    /// Runs `update` on `table` with its sync trigger off, in one transaction.
    func plant(_ example: ExampleDatabase, _ update: String) async throws {
        try await example.execute("""
            BEGIN;
            ALTER TABLE \(example.workload.table) DISABLE TRIGGER cutover_sync;
            \(update);
            ALTER TABLE \(example.workload.table) ENABLE TRIGGER cutover_sync;
            COMMIT;
            """)
    }

    /// `workload` backfilled, `update` planted behind the trigger's back, and what
    /// `phase compare --all` then says (exit 3).
    func disagreement(in workload: ExampleWorkload, planting update: String) async throws -> (ExampleDatabase, PhaseBinary.Run) {
        let example = try await backfilled(workload)
        try await plant(example, update)
        return (example, try await example.phase("compare", "--all", status: 3))
    }

    @Test("orders: agreement, then a planted status named by key and column, its values hidden unless asked")
    func ordersStatusCode() async throws {
        // Order 42 is 'new' (1); its status_code is made 3 behind the trigger's back.
        let (example, hidden) = try await disagreement(in: .ordersStatusCode, planting: "UPDATE orders SET status_code = 3 WHERE id = 42")
        #expect(hidden.output.contains("compared 2500 of 2500 rows of public.orders (0 not converted yet)\n"), "\(hidden.output)")
        #expect(hidden.output.contains("""
            disagreement: key (id) = (42), column status_code
            disagreement: key (id) = (42), column status
            1 row disagrees in 2 columns (values hidden; --show-values prints them)
            """), "\(hidden.output)")
        #expect(!hidden.output.contains("new") && !hidden.output.contains("shipped"), "\(hidden.output)")

        let shown = try await example.phase("compare", "--sample", "1000000", "--show-values", status: 3)
        #expect(shown.output.contains("""
            disagreement: key (id) = (42), column status_code: from the legacy columns "1", stored "3"
            disagreement: key (id) = (42), column status: from the modern columns "shipped", stored "new"
            1 row disagrees in 2 columns
            """), "\(shown.output)")

        let hash = try await example.lines("SELECT left(encode(sha256(convert_to(jsonb_build_array(id)::text, 'UTF8')), 'hex'), 16) FROM orders WHERE id = 42")[0]
        let hashed = try await example.phase("compare", "--all", "--hide-keys", status: 3)
        #expect(hashed.output.contains("disagreement: key sha256:\(hash), column status_code\n"), "\(hashed.output)")
        #expect(!hashed.output.contains("(id) = (42)"), "\(hashed.output)")

        let json = try await example.phase("--format", "json", "compare", "--all", "--show-values", status: 3)
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(result["disagreeingRows"] as? Int == 1)
        #expect(result["disagreements"] as? Int == 2)
        #expect(result["notConverted"] as? Int == 0)
        let listed = try #require(result["listed"] as? [[String: Any]])
        #expect(listed.map { $0["column"] as? String } == ["status_code", "status"])
        #expect(listed.map { $0["direction"] as? String } == ["up", "down"])
        #expect(listed.map { $0["key"] as? [String: String] } == [["id": "42"], ["id": "42"]])
        #expect(listed.map { $0["stored"] as? String } == ["3", "new"])

        // Put right (by a modern write, which the trigger mirrors), the plan agrees again; after
        // contract there is one representation left, and nothing to compare.
        try await example.execute("UPDATE orders SET status_code = 1 WHERE id = 42")
        try await example.phase("compare", "--all")
        try await example.phase("contract", "--yes", "--window", "0s")
        let late = try await example.phase("compare", status: 3)
        #expect(late.diagnostics.contains("cannot compare plan orders-status-code in phase contracted: the legacy columns are gone after contract"),
                "\(late.diagnostics)")
    }

    @Test("split-name: a last name planted apart from the full name names both, and not the first name")
    func splitName() async throws {
        let (example, hidden) = try await disagreement(
            in: .splitName, planting: "UPDATE people SET last_name = 'Other' WHERE id = '00000000-0000-4000-a000-000000000007'")
        #expect(hidden.output.contains("""
            disagreement: key (id) = (00000000-0000-4000-a000-000000000007), column last_name
            disagreement: key (id) = (00000000-0000-4000-a000-000000000007), column full_name
            1 row disagrees in 2 columns (values hidden; --show-values prints them)
            """), "\(hidden.output)")
        #expect(!hidden.output.contains("first_name") && !hidden.output.contains("Other"), "\(hidden.output)")
        let shown = try await example.phase("compare", "--all", "--show-values", status: 3)
        #expect(shown.output.contains(#"column last_name: from the legacy columns "Last7", stored "Other""#), "\(shown.output)")
        #expect(shown.output.contains(#"column full_name: from the modern columns "First7 Other", stored "First7 Last7""#), "\(shown.output)")

        // A modern writer's first name with a space in it: up cannot split it back, but down
        // maps it onto full_name, and that is agreement, as contract's check judges.
        try await example.execute("UPDATE people SET first_name = 'Mary Ann', last_name = 'Smith' WHERE id = '00000000-0000-4000-a000-000000000008'")
        #expect(try await example.lines("SELECT full_name FROM people WHERE id = '00000000-0000-4000-a000-000000000008'") == ["Mary Ann Smith"])
        let lossy = try await example.phase("compare", "--all", status: 3)
        #expect(lossy.output.contains("1 row disagrees in 2 columns"), "\(lossy.output)")
        #expect(!lossy.output.contains("000000000008"), "\(lossy.output)")
    }

    @Test("composite key: the whole key is reported, in text and in JSON")
    func compositeKey() async throws {
        // Row 7 is in tenant 2.
        let (example, hidden) = try await disagreement(in: .compositeKey, planting: "UPDATE line_items SET price_cents = 1 WHERE tenant_id = 2 AND id = 7")
        #expect(hidden.output.contains("""
            disagreement: key (tenant_id, id) = (2, 7), column price_cents
            disagreement: key (tenant_id, id) = (2, 7), column price
            """), "\(hidden.output)")
        let json = try await example.phase("--format", "json", "compare", "--all", status: 3)
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let listed = try #require(result["listed"] as? [[String: Any]])
        #expect(listed.map { $0["key"] as? [String: String] } == [["tenant_id": "2", "id": "7"], ["tenant_id": "2", "id": "7"]])
        #expect(listed.allSatisfy { $0["expected"] is NSNull && $0["stored"] is NSNull })
        #expect(result["keyColumns"] as? [String] == ["tenant_id", "id"])

        // More disagreeing rows than are listed: all are counted, the first 1000 by key listed.
        try await plant(example, "UPDATE line_items SET price_cents = price_cents + 1 WHERE id <= 1200")
        let many = try await example.phase("compare", "--all", status: 3)
        #expect(many.output.contains("disagreement: key (tenant_id, id) = (1, 3), column price_cents\n"), "\(many.output)")
        #expect(many.output.contains("\n200 more disagreeing rows not listed\n1200 rows disagree in 2400 columns"), "\(many.output)")
        #expect(many.output.components(separatedBy: "disagreement: key").count - 1 == 2000)
    }

    @Test("a plan with no alter_column has nothing to compare, and says so")
    func nothingToCompare() async throws {
        let example = try await ExampleDatabase.make(.usersDescription)
        try await example.phase("init")
        let refused = try await example.phase("compare", status: 3)
        #expect(refused.diagnostics.contains("cannot compare plan users-description: it keeps no column in two representations (it has no alter_column)"),
                "\(refused.diagnostics)")
    }

    @Test("a plan of SQL files cannot be compared, and says so")
    func planOfSQLFiles() async throws {
        let example = try await ExampleDatabase.make(.ordersStatusCode)
        let plan = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1").path
        let url = example.database.connectionString
        let refused = try await onThread { try PhaseBinary.run(["--plan", plan, "compare"], databaseURL: url) }
        #expect(refused.status == 3, "\(refused.output)\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("cannot compare plan drafts: it is written as SQL files, and compare reads a declarative plan's alter_column up and down expressions"),
                "\(refused.diagnostics)")
    }

    @Test("--all and --sample exclude each other")
    func allExcludesSample() async throws {
        let example = try await ExampleDatabase.make(.ordersStatusCode)
        let refused = try await example.phase("compare", "--all", "--sample", "10", status: 64)
        #expect(refused.diagnostics.contains("--all and --sample exclude each other"), "\(refused.diagnostics)")
    }
}
