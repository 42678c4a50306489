import Cutover
import Testing

/// The verdict of "applied SQL unchanged" without a server: checksums stand in as the parts'
/// texts themselves, and an earlier compiler as other text for a compiled part.
@Suite("Comparing a plan with its pins")
struct PlanPinComparisonTests {
    private static let manifest = """
        {"format": 2, "name": "orders", "table": "orders", "key": "id",
         "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
                                           "up": "CASE status WHEN 'new' THEN 1 END", "down": "CASE status_code WHEN 1 THEN 'new' END"}},
                        {"sql": {"contract": ["note.sql"]}}],
         "checks": {"contract": [{"name": "codes set", "sql": "SELECT 0", "expect": "= 0", "message": "set them"}]}}
        """

    /// The pins of a declarative plan read from `manifest`, with `note.sql` hand-written.
    private func pins(_ manifest: String = manifest) throws -> PlanPins {
        let document = try PlanDocument(manifest: Array(manifest.utf8))
        guard case .declarative(let declarative) = document else { throw NotDeclarative() }
        let compiled = declarative.compile()
        var files = compiled.fileTexts
        files["note.sql"] = "SELECT 1;\n"
        return PlanPins(plan: compiled.plan, files: files, compiled: compiled)
    }

    private struct NotDeclarative: Error {}

    /// The records a plan pinned as `pins`, with expand having applied its files: `earlier`'s
    /// parts as other text, `unpinned` parts left out.
    private func records(_ pins: PlanPins, earlier: Set<String> = [], unpinned: Set<String> = []) -> [PlanPinComparison.Record] {
        let text = { (part: String) in earlier.contains(part) ? "earlier \(part)" : pins.parts[part] ?? "" }
        let applied = ["compiled/expand.sql"].map { PlanPinComparison.Record(step: "expand", part: $0, checksum: text($0)) }
        let pinned = pins.parts.keys.sorted().filter { !unpinned.contains($0) }
            .map { PlanPinComparison.Record(step: nil, part: $0, checksum: text($0)) }
        return applied + pinned
    }

    private func compare(_ pins: PlanPins, _ records: [PlanPinComparison.Record], accepting: Bool = false) -> PlanPinComparison {
        PlanPinComparison(pins: pins, current: pins.parts, recorded: records, acceptsRecompiled: accepting)
    }

    private var compatibility: String { PlanPins.compatibilityPart(CompiledPlan.compatibility) }

    @Test("a plan as it was pinned is unchanged")
    func unchanged() throws {
        let pins = try pins()
        #expect(compare(pins, records(pins)) == .unchanged)
        #expect(pins.parts[PlanPins.declarationPart] != nil && pins.parts[compatibility] == String(CompiledPlan.compatibility))
    }

    @Test("compiled parts that differ while the declaration is pinned unchanged go on, naming each once")
    func recompiled() throws {
        let pins = try pins()
        let earlier: Set = ["compiled/expand.sql", "plan.json: backfill step's files", "plan.json: table"]
        let comparison = compare(pins, records(pins, earlier: earlier))
        #expect(comparison == .recompiled(parts: ["compiled/expand.sql", "plan.json: backfill step's files", "plan.json: table"],
                                          isAcceptedByOperator: false))
        #expect(comparison.isPassed)
    }

    @Test("a changed declaration, hand-written file or own check is refused, with the flag too")
    func written() throws {
        let pins = try pins()
        for part in [PlanPins.declarationPart, "note.sql"] {
            let comparison = compare(pins, records(pins, earlier: [part, "compiled/expand.sql"]), accepting: true)
            guard case .changed(let changes) = comparison else {
                Issue.record("\(part): \(comparison)")
                continue
            }
            #expect(changes.contains { $0.hasPrefix("\(part) changed since the plan began") }, "\(changes)")
            #expect(changes.contains { $0.hasPrefix("expand step's compiled/expand.sql changed since it was applied") })
        }
    }

    @Test("another compiler compatibility is refused, naming both numbers, with the flag too")
    func compatibilityChanged() throws {
        let pins = try pins()
        let now = CompiledPlan.compatibility
        var records = records(pins)
        for index in records.indices where records[index].part == compatibility {
            records[index].part = PlanPins.compatibilityPart(now + 1)
        }
        #expect(compare(pins, records, accepting: true) == .compatibilityChanged(then: now + 1, now: now, changes: []))
    }

    @Test("pins without the declaration's: compiled parts that differ need the operator's word, the rest never passes")
    func unpinned() throws {
        let pins = try pins()
        let unpinned: Set = [PlanPins.declarationPart, compatibility]
        #expect(compare(pins, records(pins, unpinned: unpinned)) == .unchanged)
        let recompiled = records(pins, earlier: ["compiled/expand.sql"], unpinned: unpinned)
        guard case .recompiledUnpinned(let changes) = compare(pins, recompiled) else {
            Issue.record("not refused")
            return
        }
        #expect(changes.count == 1 && changes[0].hasPrefix("expand step's compiled/expand.sql changed since it was applied"))
        #expect(compare(pins, recompiled, accepting: true) == .recompiled(parts: ["compiled/expand.sql"], isAcceptedByOperator: true))
        for part in ["plan.json: table", #"plan.json: contract step's check "codes set""#, "note.sql"] {
            let comparison = compare(pins, records(pins, earlier: ["compiled/expand.sql", part], unpinned: unpinned), accepting: true)
            guard case .changed = comparison else {
                Issue.record("\(part): \(comparison)")
                continue
            }
        }
    }

    @Test("a plan of SQL files has no compiled parts, whatever its paths")
    func sqlFiles() throws {
        let manifest = """
            {"format": 1, "name": "p", "table": "t", "modernWriterWindow": "0s",
             "steps": [{"kind": "expand", "apply": ["compiled/a.sql"], "revert": ["r.sql"]},
                       {"kind": "backfill", "batch": "b.sql", "remaining": "n.sql"}, {"kind": "contract", "apply": ["c.sql"]}]}
            """
        let plan = try MigrationPlan(manifest: Array(manifest.utf8))
        let pins = PlanPins(plan: plan, files: [:])
        #expect(pins.origin(of: "compiled/a.sql") == .handWritten)
        let records = pins.parts.keys.sorted().map { PlanPinComparison.Record(step: nil, part: $0, checksum: "earlier \($0)") }
        guard case .changed = compare(pins, records, accepting: true) else {
            Issue.record("not refused")
            return
        }
    }

    @Test("the declaration's text ignores layout, key order, tuning and messages, not what compiles")
    func declarationText() throws {
        let pinned = try pins().parts[PlanPins.declarationPart]
        let relaid = """
            {"key":"id","name":"orders","format":2,"table":"orders","modernWriterWindow":"0s","backfill":{"batchSize":7},
             "statements":[{"name":"read","application":"legacy","sql":"SELECT 1"}],
             "checks":{"contract":[{"message":"another message","expect":"= 0","sql":"SELECT 0","name":"codes set"}]},
             "operations":[{"alter_column":{"down":"CASE status_code WHEN 1 THEN 'new' END","up":"CASE status WHEN 'new' THEN 1 END",
                                            "to":{"type":"smallint","name":"status_code"},"from":"status"}},
                           {"sql":{"contract":["note.sql"]}}]}
            """
        #expect(try pins(relaid).parts[PlanPins.declarationPart] == pinned)
        let edited = Self.manifest.replacingOccurrences(of: "WHEN 'new' THEN 1 END", with: "WHEN 'new' THEN 1 ELSE 0 END")
        #expect(try pins(edited).parts[PlanPins.declarationPart] != pinned)
    }
}
