@testable import Cutover
import Foundation
import Testing

/// `docs/plan.schema.json` says what the plan readers accept: every object's keys are the
/// ones the reader of that object accepts, found by asking the reader itself (a probe key it
/// refuses names them), and every plan the repository holds matches the schema.
@Suite("plan.json schema")
struct PlanSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func schema() throws -> SchemaValidator {
        try SchemaValidator(Array(try Data(contentsOf: root.appendingPathComponent("docs/plan.schema.json"))))
    }

    /// A declarative plan with every operation and every kind of object a format-2 plan has.
    static let declarative = """
        {"format": 2, "name": "probe-plan", "table": "public.t", "key": "id", "columns": ["a"],
         "legacyApplicationPattern": "legacy-%", "modernWriterWindow": "10m", "backfill": {"batchSize": 10},
         "operations": [
           {"add_column": {"name": "n1", "type": "text", "up": "a", "notNull": true,
                           "references": {"table": "public.r", "columns": "id", "onDelete": "cascade"}}},
           {"alter_column": {"from": "b", "to": {"name": "n2", "type": "integer"}, "up": "length(b)", "down": "n2::text"}},
           {"drop_column": {"name": "c", "default": "'x'"}},
           {"create_index": {"name": "i1", "columns": "n1"}},
           {"drop_index": {"name": "i0"}},
           {"add_constraint": {"name": "k1", "check": "n2 > 0"}},
           {"drop_constraint": {"name": "k0"}},
           {"set_not_null": {"column": "d"}},
           {"sql": {"expand": [{"file": "x.sql"}]}}
         ],
         "checks": {"contract": [{"name": "own", "sql": "SELECT 0", "expect": "= 0", "message": "m"}]}}
        """

    /// A declarative plan that renames its table: `rename_table` is a plan's only operation.
    static let rename = """
        {"format": 2, "name": "probe-plan", "table": "t", "key": "id", "operations": [{"rename_table": {"to": "u"}}]}
        """

    /// A plan of SQL files with every kind of step and object a format-1 plan has.
    static let files = """
        {"format": 1, "name": "probe-plan", "table": "t", "modernWriterWindow": "10m",
         "steps": [
           {"kind": "expand", "apply": [{"file": "a.sql"}], "revert": ["r.sql"],
            "checks": [{"name": "c", "sql": "SELECT 1", "expect": "= 1", "message": "m"}]},
           {"kind": "switch"},
           {"kind": "backfill", "batch": "b.sql", "remaining": "n.sql"},
           {"kind": "contract", "apply": ["z.sql"]}
         ]}
        """

    /// Where a probe key goes (just after `anchor`, a member unique in the plan), and the
    /// schema definition of the object it lands in.
    static let probes: [(plan: String, anchor: String, definition: String)] = [
        (declarative, #""name": "probe-plan""#, "declarativePlan"),
        (declarative, #""batchSize": 10"#, "backfill"),
        (declarative, #""type": "text""#, "add_column"),
        (declarative, #""onDelete": "cascade""#, "references"),
        (declarative, #""from": "b""#, "alter_column"),
        (declarative, #""type": "integer""#, "modernColumn"),
        (declarative, #""name": "c""#, "drop_column"),
        (declarative, #""name": "i1""#, "create_index"),
        (declarative, #""name": "i0""#, "drop_index"),
        (declarative, #""name": "k1""#, "add_constraint"),
        (declarative, #""name": "k0""#, "drop_constraint"),
        (declarative, #""column": "d""#, "set_not_null"),
        (declarative, #""expand": [{"file": "x.sql"}]"#, "sql"),
        (declarative, #""file": "x.sql""#, "sqlFileObject"),
        (declarative, #""contract": [{"name": "own", "sql": "SELECT 0", "expect": "= 0", "message": "m"}]"#, "declarativeChecks"),
        (rename, #""to": "u""#, "rename_table"),
        (files, #""name": "probe-plan""#, "filesPlan"),
        (files, #""kind": "expand""#, "expandStep"),
        (files, #""kind": "switch""#, "switchStep"),
        (files, #""kind": "backfill""#, "backfillStep"),
        (files, #""kind": "contract""#, "contractStep"),
        (files, #""file": "a.sql""#, "sqlFileObject"),
        (files, #""expect": "= 1""#, "check"),
    ]

    /// The keys the reader accepts where `anchor` is, as its refusal of a probe key lists them.
    static func acceptedKeys(_ plan: String, after anchor: String) throws -> Set<String> {
        #expect(plan.components(separatedBy: anchor).count == 2, "\(anchor) must be once in the plan")
        let probed = plan.replacing(anchor, with: anchor + #", "cutover_probe": 0"#)
        do {
            _ = try PlanDocument(manifest: Array(probed.utf8))
            Issue.record("the probe key after \(anchor) was accepted")
            return []
        } catch {
            guard case .unknownKeys(let keys, let allowed) = error.problem, keys == ["cutover_probe"] else {
                Issue.record("the probe after \(anchor) was refused for another reason: \(error)")
                return []
            }
            return Set(allowed)
        }
    }

    @Test func theProbePlansAreReadAndMatchTheSchema() throws {
        let schema = try Self.schema()
        for plan in [Self.declarative, Self.files] {
            _ = try PlanDocument(manifest: Array(plan.utf8))
            #expect(schema.problems(try JSONParser.parse(Array(plan.utf8))) == [])
        }
    }

    @Test("each object's keys in the schema are the ones its reader accepts", arguments: probes.indices)
    func keysMatchTheReader(index: Int) throws {
        let probe = Self.probes[index]
        let accepted = try Self.acceptedKeys(probe.plan, after: probe.anchor)
        #expect(!accepted.isEmpty)
        #expect(try Self.schema().propertyNames(ofDefinition: probe.definition) == accepted, "$defs/\(probe.definition)")
    }

    @Test func theSchemaNamesEveryOperationAndNoOther() throws {
        #expect(try Self.schema().propertyNames(ofDefinition: "operation") == Set(DeclarativeOperation.names))
    }

    @Test func theSchemaUsesOnlyKeywordsTheTestChecks() throws {
        #expect(try Self.schema().unsupportedKeywords == [])
    }

    @Test func everyPlanOfTheRepositoryIsReadAndMatchesTheSchema() throws {
        let schema = try Self.schema()
        var manifests = ["sql/drafts/plan.json"]
        let fixtures = "examples"
        for folder in [fixtures] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent(folder).path)) ?? []
            manifests += names.sorted().map { "\(folder)/\($0)/plan.json" }
                .filter { FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }
        }
        #expect(manifests.contains("\(fixtures)/users-description/plan.json"))
        #expect(manifests.contains("\(fixtures)/orders-status-code/plan.json"))
        for manifest in manifests {
            let bytes = Array(try Data(contentsOf: Self.root.appendingPathComponent(manifest)))
            _ = try PlanDocument(manifest: bytes, file: manifest)
            #expect(schema.problems(try JSONParser.parse(bytes)) == [], "\(manifest)")
        }
    }

    @Test("the schema refuses what the reader refuses", arguments: [
        (#""name": "probe-plan""#, #""name": "probe-plan", "tabel": "t""#),
        (#""from": "b""#, #""from": "b", "using": "x""#),
        (#"{"drop_index": {"name": "i0"}}"#, #"{"drop_index": {"name": "i0"}, "drop_constraint": {"name": "k9"}}"#),
        (#"{"drop_index": {"name": "i0"}}"#, #"{"rename_everything": {"name": "i0"}}"#),
        (#""name": "c", "default": "'x'""#, #""name": "c", "default": "'x'", "down": "'y'""#),
        (#""format": 2"#, #""format": 3"#),
        (#""key": "id", "#, ""),
        (#""batchSize": 10"#, #""batchSize": 0"#),
        (#""file": "x.sql""#, #""file": "compiled/x.sql""#),
    ])
    func refusals(anchor: String, replacement: String) throws {
        let broken = Self.declarative.replacing(anchor, with: replacement)
        #expect(broken != Self.declarative)
        #expect(throws: PlanManifestError.self) { try PlanDocument(manifest: Array(broken.utf8)) }
        #expect(try Self.schema().problems(try JSONParser.parse(Array(broken.utf8))) != [])
    }
}
