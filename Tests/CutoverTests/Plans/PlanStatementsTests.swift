@testable import Cutover
import Testing

/// The applications' statements a plan declares for `phase rehearse`, in both formats.
@Suite("A plan's application statements")
struct PlanStatementsTests {
    private static func declarative(_ statements: String) -> [UInt8] {
        Array("""
            {"format": 2, "name": "n", "table": "orders", "key": "id",
             "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"}, "up": "1", "down": "'x'"}}],
             "statements": \(statements)}
            """.utf8)
    }

    @Test func declaredStatementsAreKeptInOrderWithTheirApplication() throws {
        let plan = try DeclarativePlan(manifest: Self.declarative("""
            [{"name": "mark paid", "application": "legacy", "sql": "UPDATE orders SET status = 'paid' WHERE id = 1"},
             {"name": "read code", "application": "modern", "sql": "SELECT status_code\\nFROM orders WHERE id = 1;"}]
            """))
        let statements = plan.compile().plan.statements
        #expect(statements == [
            ApplicationStatement(name: "mark paid", application: .legacy, sql: "UPDATE orders SET status = 'paid' WHERE id = 1"),
            ApplicationStatement(name: "read code", application: .modern, sql: "SELECT status_code\nFROM orders WHERE id = 1;"),
        ])
    }

    @Test("a statement list that breaks a rule is refused, naming the field", arguments: [
        (#"[{"name": "a", "application": "old", "sql": "SELECT 1"}]"#, "statements[0].application",
         PlanManifestProblem.notOneOf("old", allowed: ["legacy", "modern"])),
        (#"[{"name": "a", "application": "legacy", "sql": "SELECT 1; SELECT 2"}]"#, "statements[0].sql", .statementCount(found: 2)),
        (#"[{"name": "a", "application": "legacy", "sql": "SELECT 1"}, {"name": "a", "application": "modern", "sql": "SELECT 2"}]"#,
         "statements[1].name", .repeatedStatementName("a")),
        (#"[{"name": "a", "application": "legacy", "sql": "SELECT 1", "params": []}]"#, "statements[0]",
         .unknownKeys(["params"], allowed: ["name", "application", "sql"])),
    ])
    func refused(statements: String, field: String, problem: PlanManifestProblem) {
        #expect(throws: PlanManifestError(file: "plan.json", field: field, problem: problem)) {
            try DeclarativePlan(manifest: Self.declarative(statements))
        }
    }

    @Test func aFormatOnePlanDeclaresThemToo() throws {
        let plan = try MigrationPlan(manifest: Array("""
            {"format": 1, "name": "n", "table": "t", "modernWriterWindow": "0s",
             "steps": [{"kind": "expand", "apply": ["a.sql"], "revert": ["r.sql"]},
                       {"kind": "backfill", "batch": "b.sql", "remaining": "n.sql"},
                       {"kind": "contract", "apply": ["c.sql"]}],
             "statements": [{"name": "rename", "application": "legacy", "sql": "UPDATE t SET title = 'x' WHERE id = 'a'"}]}
            """.utf8))
        #expect(plan.statements.map(\.name) == ["rename"])
    }
}
