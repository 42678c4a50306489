import CutoverTestSupport
import Cutover
import Foundation
import Testing

/// `phase plan` shows what a plan does to its table, statement by statement with its lock,
/// for a declarative plan as the compiler declares it and for a plan of SQL files as estimated.
@Suite("phase plan")
struct PlanCommandTests {
    static let fixtures = PlanSchemaTests.root.appendingPathComponent("examples")

    static func compiled(_ name: String) throws -> CompiledPlan {
        let bytes = Array(try Data(contentsOf: fixtures.appendingPathComponent("\(name)/plan.json")))
        guard case .declarative(let plan) = try PlanDocument(manifest: bytes) else { throw PlanCommandTestFailure.notDeclarative }
        return plan.compile()
    }

    static func json(_ run: PhaseBinary.Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
    }

    @Test(arguments: ["orders-status-code", "users-description"])
    func everyStatementOfEveryStepIsShownWithTheLockTheCompilerDeclares(plan name: String) throws {
        let compiled = try Self.compiled(name)
        let run = try PhaseBinary.run(["--plan", Self.fixtures.appendingPathComponent(name).path, "plan", "--format", "json"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let plan = try Self.json(run)
        #expect(plan["format"] as? Int == 2)
        #expect(plan["locksDeclared"] as? Bool == true)
        #expect(plan["key"] as? [String] == compiled.declaration.key)
        let steps = try #require(plan["steps"] as? [[String: Any]])
        #expect(steps.compactMap { $0["kind"] as? String } == ["expand", "switch", "backfill", "contract"])
        var shown: [String: [[String: Any]]] = [:]
        for step in steps {
            let backfill = (step["backfill"] as? [String: Any])?["sqlFiles"] as? [[String: Any]] ?? []
            for file in (step["apply"] as? [[String: Any]] ?? []) + (step["revert"] as? [[String: Any]] ?? []) + backfill {
                shown[try #require(file["path"] as? String)] = file["statements"] as? [[String: Any]]
            }
            #expect(step["tableEffect"] is [String: Any])
        }
        #expect(Set(shown.keys) == Set(compiled.files.map(\.path)))
        for file in compiled.files {
            let statements = try #require(shown[file.path], "\(file.path) has no statements in the JSON")
            #expect(statements.compactMap { $0["sql"] as? String } == file.statements.map(\.sql))
            #expect(statements.map { $0["lock"] as? String } == file.statements.map { $0.lock?.rawValue })
            #expect(statements.compactMap { $0["rewritesTable"] as? Bool } == file.statements.map(\.rewritesTable))
        }
        let contract = try #require(steps.last)
        #expect(contract["irreversibleAfter"] as? String == "compiled/contract_drop.sql")
        let checks = try #require(contract["checks"] as? [[String: Any]])
        let declared = try #require(compiled.plan.step(.contract)).checks
        #expect(checks.compactMap { $0["name"] as? String } == declared.map(\.name))
        #expect(checks.allSatisfy { ($0["sql"] as? String)?.hasPrefix("SELECT ") == true })
    }

    @Test func theTextSaysWhatEachStepDoesToTheTableAndEachStatementsLock() throws {
        let folder = Self.fixtures.appendingPathComponent("orders-status-code").path
        let run = try PhaseBinary.run(["--plan", folder, "plan"])
        #expect(run.status == 0, "\(run.diagnostics)")
        for line in [
            "declarative plan (format 2), key id",
            "  alter_column status -> status_code smallint NOT NULL CHECK (status_code BETWEEN 1 AND 3)",
            "locks: as the compiler declares them for each statement; no statement rewrites the table",
            "  on the table: ACCESS EXCLUSIVE at most, held for catalog changes only (each waits at most --lock-timeout); "
                + "reads the whole table under SHARE UPDATE EXCLUSIVE, reads and writes go on; no rewrite",
            "  apply compiled/expand.sql (in a transaction); locks: ACCESS EXCLUSIVE, SHARE ROW EXCLUSIVE",
            "    ALTER TABLE public.orders ADD COLUMN IF NOT EXISTS status_code smallint",
            "      ACCESS EXCLUSIVE lock, catalog only, no rewrite",
            "  phase rollback expand runs:",
            "  revert compiled/expand_revert.sql (in a transaction); locks: ACCESS EXCLUSIVE",
            "  apply compiled/contract_not_null_pg18.sql (in a transaction; PostgreSQL >= 18); locks: ACCESS EXCLUSIVE",
            "    ALTER TABLE public.orders VALIDATE CONSTRAINT orders_status_code_check",
            "      SHARE UPDATE EXCLUSIVE lock, scans the table, no rewrite",
            "  check no NULL in status_code (expect = 0)",
            "    SELECT count(*) FROM public.orders AS t WHERE t.status_code IS NULL",
            "  irreversible once compiled/contract_drop.sql has run: nothing brings the legacy representation back",
        ] {
            #expect(run.output.contains(line + "\n"), "missing: \(line)")
        }
        // The trigger's body is shown only with --sql.
        #expect(!run.output.contains("FOR UPDATE SKIP LOCKED"))
        let whole = try PhaseBinary.run(["--plan", folder, "plan", "--sql"])
        #expect(whole.status == 0)
        #expect(whole.output.contains("           FOR UPDATE SKIP LOCKED;\n"))
    }

    /// A small plan of SQL files in a temporary folder.
    static func filesPlan() throws -> URL {
        let folder = TestScratch.url("plan-format-1")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = [
            "plan.json": """
                {"format": 1, "name": "items", "table": "items", "modernWriterWindow": "10m", "steps": [
                  {"kind": "expand", "apply": ["expand.sql"], "revert": ["expand_revert.sql"],
                   "checks": [{"name": "legacy table present", "sql": "SELECT to_regclass('items') IS NOT NULL",
                               "expect": "= true", "message": "items must exist"}]},
                  {"kind": "backfill", "batch": "batch.sql", "remaining": "remaining.sql"},
                  {"kind": "contract", "apply": ["contract.sql"]}]}
                """,
            "expand.sql": "ALTER TABLE items ADD COLUMN code int;\nCREATE OR REPLACE FUNCTION items_code() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n",
            "expand_revert.sql": "ALTER TABLE items DROP COLUMN code;\n",
            "batch.sql": "UPDATE items SET code = 1 WHERE code IS NULL;\n",
            "remaining.sql": "SELECT count(*) FROM items WHERE code IS NULL;\n",
            "contract.sql": "ALTER TABLE items ALTER COLUMN code SET NOT NULL;\n",
        ]
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return folder
    }

    @Test func aDeclarativePlansHandWrittenFilesAreShownWithEstimatedLocks() throws {
        let folder = TestScratch.url("plan-hand-written")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try """
            {"format": 2, "name": "users-audit", "table": "users", "key": "id", "operations": [
              {"add_column": {"name": "audited", "type": "boolean", "default": "false"}},
              {"sql": {"expand": [{"file": "audit.sql", "transaction": false}], "revert": ["audit_revert.sql"]}}]}
            """.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
        try "CREATE INDEX CONCURRENTLY users_audited ON users (audited);\n".write(to: folder.appendingPathComponent("audit.sql"),
                                                                                atomically: true, encoding: .utf8)
        try "DROP INDEX users_audited;\n".write(to: folder.appendingPathComponent("audit_revert.sql"), atomically: true, encoding: .utf8)
        let run = try PhaseBinary.run(["--plan", folder.path, "plan"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("; the hand-written files declare none: theirs are estimated from each statement's first words\n"))
        #expect(run.output.contains("  apply audit.sql (hand-written, outside a transaction); locks: SHARE UPDATE EXCLUSIVE (create index concurrently; writers go on)\n"))
        #expect(run.output.contains("  revert audit_revert.sql (hand-written, in a transaction); locks: ACCESS EXCLUSIVE (drop index; brief)\n"))
        let json = try Self.json(try PhaseBinary.run(["--plan", folder.path, "plan", "--format", "json"]))
        let expand = try #require((json["steps"] as? [[String: Any]])?.first)
        let files = try #require(expand["apply"] as? [[String: Any]])
        #expect(files.map { $0["path"] as? String } == ["compiled/expand.sql", "audit.sql"])
        #expect(files.map { $0["locksDeclared"] as? Bool } == [true, false])
    }

    @Test func aPlanOfSQLFilesSaysItsLocksAreEstimatesAndShowsItsFiles() throws {
        let folder = try Self.filesPlan()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try PhaseBinary.run(["--plan", folder.path, "plan"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("plan of SQL files (format 1): it declares no locks; each is estimated from its statement's first words\n"))
        #expect(run.output.contains("  apply expand.sql (in a transaction); locks: ACCESS EXCLUSIVE (alter table; brief, under the lock timeout); none on tables (function)\n"))
        #expect(run.output.contains("  phase rollback expand runs:\n  revert expand_revert.sql (in a transaction); locks: "))
        #expect(run.output.contains("  check legacy table present (expect = true)\n    SELECT to_regclass('items') IS NOT NULL\n"))
        #expect(!run.output.contains("CREATE OR REPLACE FUNCTION"))
        let whole = try PhaseBinary.run(["--plan", folder.path, "plan", "--sql"])
        #expect(whole.output.contains("    ALTER TABLE items ADD COLUMN code int;\n    CREATE OR REPLACE FUNCTION items_code()"))

        let json = try Self.json(try PhaseBinary.run(["--plan", folder.path, "plan", "--format", "json"]))
        #expect(json["format"] as? Int == 1)
        #expect(json["locksDeclared"] as? Bool == false)
        let steps = try #require(json["steps"] as? [[String: Any]])
        let files = steps.flatMap { ($0["apply"] as? [[String: Any]] ?? []) + ($0["revert"] as? [[String: Any]] ?? []) }
        #expect(!files.isEmpty)
        #expect(files.allSatisfy { $0["locksDeclared"] as? Bool == false && $0["statements"] is NSNull && ($0["sql"] as? String)?.isEmpty == false })
        #expect(steps.allSatisfy { $0["tableEffect"] is NSNull })
    }
}

/// A fixture that should be a declarative plan is not.
enum PlanCommandTestFailure: Error {
    case notDeclarative
}
