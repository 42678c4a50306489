@testable import Cutover
import Testing

@Suite("Refusing declarative plans that break a rule")
struct DeclarativePlanRefusalTests {
    /// A plan whose operations are `operations` (JSON), with `extra` root members.
    static func manifest(_ operations: String, extra: String = "") -> [UInt8] {
        Array("""
            {"format": 2, "name": "n", "table": "orders", "key": "id", "columns": ["total"],\(extra)
             "operations": [\(operations)]}
            """.utf8)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let rule: String
        let manifest: [UInt8]
        let field: String
        let problem: PlanManifestProblem
        var testDescription: String { rule }

        init(_ rule: String, _ operations: String, extra: String = "", field: String, _ problem: PlanManifestProblem) {
            self.rule = rule
            self.manifest = DeclarativePlanRefusalTests.manifest(operations, extra: extra)
            self.field = field
            self.problem = problem
        }
    }

    static let alter = #"{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"}, "up": "UP", "down": "DOWN"}}"#

    /// A check of the plan's own, named `name`, as JSON.
    static func check(_ name: String) -> String {
        #"{"name": "\#(name)", "sql": "SELECT 0", "expect": "= 0", "message": "m"}"#
    }

    /// An alter_column whose expressions read only its columns.
    static let validAlter = alter(up: #""length(status)""#)

    static func alter(up: String, down: String = #""'x'""#) -> String {
        alter.replacing("\"UP\"", with: up).replacing("\"DOWN\"", with: down)
    }

    static let refusals: [Refusal] = [
        Refusal("an unknown operation", #"{"rename_colum": {}}"#, field: "operations[0].rename_colum", .unknownOperation("rename_colum")),
        Refusal("a rename beside other operations", #"{"drop_index": {"name": "a"}}, {"rename_table": {"to": "purchases"}}"#,
                field: "operations[1]", .renameNotAlone(count: 2)),
        Refusal("a rename with an unknown key", #"{"rename_table": {"to": "purchases", "schema": "sales"}}"#,
                field: "operations[0].rename_table", .unknownKeys(["schema"], allowed: ["to"])),
        Refusal("two operations in one entry", #"{"drop_index": {"name": "a"}, "drop_constraint": {"name": "b"}}"#,
                field: "operations[0]", .operationKeyCount(found: 2)),
        Refusal("an unknown key of an operation", #"{"drop_index": {"name": "a", "concurrently": true}}"#,
                field: "operations[0].drop_index", .unknownKeys(["concurrently"], allowed: ["name"])),
        Refusal("an unknown root key", #"{"drop_index": {"name": "a"}}"#, extra: #" "colour": 1,"#,
                field: "", .unknownKeys(["colour"], allowed: ["format", "name", "table", "key", "revision", "columns", "legacyApplicationPattern",
                                                             "modernWriterWindow", "backfill", "operations", "checks", "statements"])),
        Refusal("a column the plan does not know", alter(up: #""CASE statsu WHEN 'new' THEN 1 END""#),
                field: "operations[0].alter_column.up", .unknownColumn("statsu", known: ["id", "status", "status_code"])),
        Refusal("an alter_column's up reading a column of the table outside the change", alter(up: #""total""#),
                field: "operations[0].alter_column.up", .unknownColumn("total", known: ["id", "status", "status_code"])),
        Refusal("a new column's up reading another new column",
                #"{"add_column": {"name": "a", "type": "int", "up": "1"}}, {"add_column": {"name": "b", "type": "int", "up": "a + 1"}}"#,
                field: "operations[1].add_column.up", .unknownColumn("a", known: ["id", "total"])),
        Refusal("a check reading a column contract drops",
                #"{"drop_column": {"name": "old", "default": "0"}}, {"add_constraint": {"name": "c", "check": "old > 0"}}"#,
                field: "operations[1].add_constraint.check", .unknownColumn("old", known: ["id", "total"])),
        Refusal("a name past 63 bytes", #"{"drop_index": {"name": "\#(String(repeating: "x", count: 64))"}}"#,
                field: "operations[0].drop_index.name", .lengthOutOfRange(found: 64, allowed: 1...63, unit: .bytes)),
        Refusal("a NOT NULL column nothing fills", #"{"add_column": {"name": "a", "type": "int", "notNull": true}}"#,
                field: "operations[0].add_column", .contractNeedsBackfill(column: "a")),
        Refusal("two statements in an expression", alter(up: #""1; DROP TABLE orders""#),
                field: "operations[0].alter_column.up", .invalidExpression(.semicolon)),
        Refusal("a subquery in an expression", alter(up: #""(SELECT 1)""#),
                field: "operations[0].alter_column.up", .invalidExpression(.query("select"))),
        Refusal("a parameter in an expression", alter(up: #""$1""#), field: "operations[0].alter_column.up", .invalidExpression(.dollar)),
        Refusal("a comment in an expression", alter(up: #""1 -- one""#), field: "operations[0].alter_column.up", .invalidExpression(.comment)),
        Refusal("an open string", alter(up: #""'new""#), field: "operations[0].alter_column.up", .invalidExpression(.unterminatedString)),
        Refusal("brackets that do not pair", alter(up: #""(1""#), field: "operations[0].alter_column.up", .invalidExpression(.unbalanced)),
        Refusal("the key named again as a new column", #"{"add_column": {"name": "id", "type": "int"}}"#,
                field: "operations[0].add_column.name", .repeatedColumn("id")),
        Refusal("a drop_column with neither down nor default", #"{"drop_column": {"name": "old"}}"#,
                field: "operations[0].drop_column", .exactlyOne(["down", "default"], found: 0)),
        Refusal("a multi-column up missing a column",
                #"{"alter_column": {"from": "n", "to": [{"name": "a", "type": "text"}, {"name": "b", "type": "text"}], "up": {"a": "n"}, "down": "a || b"}}"#,
                field: "operations[0].alter_column.up", .expressionColumns(expected: ["a", "b"], found: ["a"])),
        Refusal("a hand-written file where compiled files go", #"{"sql": {"expand": ["compiled/expand.sql"]}}"#,
                field: "operations[0].sql.expand[0]", .reservedPath("compiled/expand.sql")),
        Refusal("a type that is not one", #"{"add_column": {"name": "a", "type": "int; DROP TABLE x"}}"#,
                field: "operations[0].add_column.type", .notOneOf("int; DROP TABLE x", allowed: ["a type such as smallint, varchar(255) or public.mood"])),
        Refusal("own checks for a step that does not exist", validAlter, extra: #" "checks": {"cleanup": []},"#,
                field: "checks", .unknownKeys(["cleanup"], allowed: ["expand", "switch", "backfill", "contract"])),
        Refusal("an own check with the name of one the compiler derives for its step", validAlter,
                extra: #" "checks": {"contract": [{"name": "legacy writes tracked", "sql": "SELECT 0", "expect": "= 0", "message": "m"}]},"#,
                field: "checks.contract[0].name", .repeatedCheckName("legacy writes tracked")),
        Refusal("two own checks of one step with one name", validAlter,
                extra: #" "checks": {"switch": [\#(check("a")), \#(check("a"))]},"#,
                field: "checks.switch[1].name", .repeatedCheckName("a")),
        Refusal("an own check's file where compiled files go", validAlter,
                extra: #" "checks": {"expand": [{"name": "a", "sqlFile": "compiled/a.sql", "expect": "= 0", "message": "m"}]},"#,
                field: "checks.expand[0].sqlFile", .reservedPath("compiled/a.sql")),
        Refusal("an own check with an unknown key", validAlter,
                extra: #" "checks": {"backfill": [{"name": "a", "sql": "SELECT 0", "expect": "= 0", "message": "m", "when": "now"}]},"#,
                field: "checks.backfill[0]", .unknownKeys(["when"], allowed: ["name", "sql", "sqlFile", "expect", "message"])),
        Refusal("own checks that are not an object of lists", validAlter, extra: #" "checks": [],"#,
                field: "checks", .wrongType(expected: [.object], found: .array)),
        Refusal("an index method that does not exist", #"{"create_index": {"name": "i", "columns": "total", "method": "btre"}}"#,
                field: "operations[0].create_index.method", .notOneOf("btre", allowed: ["btree", "hash", "gist", "spgist", "gin", "brin"])),
    ]

    @Test("each rule refuses with its field and problem", arguments: refusals)
    func refuses(_ refusal: Refusal) {
        #expect(throws: PlanManifestError(file: "plan.json", field: refusal.field, problem: refusal.problem)) {
            try DeclarativePlan(manifest: refusal.manifest)
        }
    }

    @Test("every refusal is one line naming the file and the field", arguments: refusals)
    func oneLine(_ refusal: Refusal) throws {
        let error = try #require(throws: PlanManifestError.self) { try DeclarativePlan(manifest: refusal.manifest) }
        #expect(!error.description.contains("\n"))
        #expect(error.description.hasPrefix("plan.json: " + (refusal.field.isEmpty ? "" : refusal.field + ": ") + "expected "))
    }

    @Test("the messages read as an operator needs them")
    func messages() throws {
        let unknown = try #require(throws: PlanManifestError.self) {
            try DeclarativePlan(manifest: Self.manifest(Self.alter(up: #""CASE statsu WHEN 'new' THEN 1 END""#)))
        }
        #expect(unknown.description == #"plan.json: operations[0].alter_column.up: expected a column the plan knows here "#
            + #"(id, status, status_code); list other existing columns in "columns"; found "statsu""#)
        let operation = try #require(throws: PlanManifestError.self) { try DeclarativePlan(manifest: Self.manifest(#"{"rename_colum": {}}"#)) }
        #expect(operation.description == "plan.json: operations[0].rename_colum: expected one of add_column, alter_column, drop_column, "
            + #"create_index, drop_index, add_constraint, drop_constraint, set_not_null, rename_table, sql; found "rename_colum""#)
    }

    @Test("each format is read by its own reader, and PlanDocument reads both")
    func formats() throws {
        let declarative = Self.manifest(#"{"drop_index": {"name": "a"}}"#)
        #expect(throws: PlanManifestError(file: "plan.json", field: "format", problem: .wrongFormat(found: 2, expected: 1))) {
            try MigrationPlan(manifest: declarative)
        }
        let files = Array(PlanManifestSamples.full.utf8)
        #expect(throws: PlanManifestError(file: "plan.json", field: "format", problem: .wrongFormat(found: 1, expected: 2))) {
            try DeclarativePlan(manifest: files)
        }
        #expect(try PlanDocument(manifest: files) == .files(try MigrationPlan(manifest: files)))
        #expect(try PlanDocument(manifest: declarative) == .declarative(try DeclarativePlan(manifest: declarative)))
    }
}
