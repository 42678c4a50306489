import Cutover
import Testing

/// Damaged and hostile variants of a valid manifest, generated from fixed seeds so every run replays the same bytes.
@Suite("Plan manifests under damage", .timeLimit(.minutes(1)))
struct PlanManifestFuzzTests {
    static let seeds: [UInt64] = [1, 2, 0xC0FF_EE]
    static let variantsPerSeed = 1_500

    @Test("every variant reads as a plan that keeps every rule, or as a one-line typed refusal", arguments: seeds)
    func variants(seed: UInt64) {
        var mutator = ManifestMutator(seed: seed)
        var accepted = 0
        var problems: Set<String> = []
        for _ in 0..<Self.variantsPerSeed {
            let bytes = mutator.variant(of: Array(PlanManifestSamples.full.utf8))
            switch PlanManifestSamples.read(bytes) {
            case .success(let plan):
                accepted += 1
                checkRules(of: plan)
            case .failure(let error):
                problems.insert(Mirror(reflecting: error.problem).children.first?.label ?? "\(error.problem)")
                checkShape(of: error)
            }
            // Reading has no hidden state: the same bytes give the same answer.
            #expect(PlanManifestSamples.refusal(of: bytes) == PlanManifestSamples.refusal(of: bytes))
        }
        // The damage reaches past the JSON syntax into the manifest's own rules, and some variants survive it.
        #expect(accepted > 0)
        #expect(problems.count >= 15, "problems seen: \(problems.sorted())")
    }

    private func checkShape(of error: PlanManifestError, sourceLocation: SourceLocation = #_sourceLocation) {
        let line = error.description
        #expect(line.hasPrefix("plan.json: "), sourceLocation: sourceLocation)
        #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(line)")
        #expect(line.unicodeScalars.count < 400, "\(line.prefix(400))")
        #expect(line.contains("expected ") && line.contains("; found "), "\(line)")
        #expect(error.field.allSatisfy { $0.isLetter || $0.isNumber || "[].".contains($0) }, "\(error.field)")
    }

    private func checkRules(of plan: MigrationPlan) {
        let kinds = plan.steps.map(\.kind)
        #expect(kinds.first == .expand && kinds.last == .contract)
        #expect(zip(kinds, kinds.dropFirst()).allSatisfy { pair in
            PlanStep.Kind.allCases.firstIndex(of: pair.0) ?? 0 < PlanStep.Kind.allCases.firstIndex(of: pair.1) ?? 0
        })
        #expect(PlanLimits.nameLength.contains(plan.name.unicodeScalars.count))
        #expect(PlanLimits.tableNameByteCount.contains(plan.table.utf8.count))
        #expect(plan.modernWriterWindow >= .zero && plan.modernWriterWindow <= PlanLimits.maximumModernWriterWindow)
        for path in plan.sqlFilePaths {
            let components = path.split(separator: "/", omittingEmptySubsequences: false)
            #expect(PlanLimits.pathLength.contains(path.count), "\(path)")
            #expect(path.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_./-".contains($0)) }, "\(path)")
            #expect(!components.contains { $0.isEmpty || $0 == "." || $0 == ".." }, "\(path)")
            #expect(path.hasSuffix(".sql") && components.last != ".sql", "\(path)")
        }
        for step in plan.steps {
            #expect(Set(step.checks.map(\.name)).count == step.checks.count)
            #expect(step.checks.count <= PlanLimits.maximumListCount)
            #expect((step.kind == .expand || step.kind == .contract) == !step.apply.isEmpty)
            #expect((step.kind == .expand) == !step.revert.isEmpty)
            #expect((step.kind == .backfill) == (step.backfill != nil))
            if let backfill = step.backfill { #expect(PlanLimits.batchSize.contains(backfill.batchSize)) }
        }
    }
}

/// Damages manifests: cuts, flips, inserts and deletes bytes, and swaps values for hostile ones.
private struct ManifestMutator {
    private var generator: SeededGenerator

    private static let hostileStrings = [
        "", "..", "../x.sql", "/abs.sql", #"a\\b.sql"#, #"\u0000"#, String(repeating: "x", count: 3_000),
        #"\u202e"#, "migrate", "expand", "switch", "backfill", "contract", "= 0", "< 'a'", "is null", "0s", "367d",
        "1e3", "\u{E9}.sql", #"\ud83d\ude00"#, #"\ud800"#, "a//b.sql", "x.txt", "checks/ok.sql", "10m", "name",
    ]
    private static let hostileValues = [
        "0", "-1", "1e3", "1.5", "99999999999999999999", "1000001", "2", "1", "-0", "1E400", "[]", "{}", "null",
        "true", #"["a.sql"]"#, #"{"file": "a.sql"}"#, #"[{"kind": "switch"}]"#,
    ]
    private static let tokens: [[UInt8]] = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "0", "-", "e", " ", "\n", #""kind": "switch","#,
        #""x": 1,"#, #""name": "n","#,
    ].map { Array($0.utf8) } + [[0x00], [0xFF], [0xC3], [0xE2, 0x80]]

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func variant(of original: [UInt8]) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            mutate(&bytes)
        }
        return bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let position = Int.random(in: 0...bytes.count, using: &generator)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            bytes = Array(bytes[..<position])
        case 1 where position < bytes.count:
            bytes[position] = UInt8.random(in: 0...255, using: &generator)
        case 2:
            bytes.insert(contentsOf: Self.tokens.randomElement(using: &generator) ?? [], at: position)
        case 3:
            bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...20, using: &generator)))
        case 4, 5:
            replaceString(in: &bytes, keepingQuotes: true,
                          with: Self.hostileStrings.randomElement(using: &generator) ?? "")
        case 6:
            replaceString(in: &bytes, keepingQuotes: false,
                          with: Self.hostileValues.randomElement(using: &generator) ?? "")
        default:
            let length = Int.random(in: 1...80, using: &generator)
            let copy = Array(bytes[position..<min(bytes.count, position + length)])
            bytes.insert(contentsOf: copy, at: Int.random(in: 0...bytes.count, using: &generator))
        }
    }

    /// Replaces the text of a random string literal, or the whole literal, with `replacement`.
    private mutating func replaceString(in bytes: inout [UInt8], keepingQuotes: Bool, with replacement: String) {
        let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\"") && ($0 == 0 || bytes[$0 - 1] != UInt8(ascii: "\\")) }
        let literals = stride(from: 0, to: quotes.count - 1, by: 2).map { quotes[$0]...quotes[$0 + 1] }
        guard let literal = literals.randomElement(using: &generator) else { return }
        let range = keepingQuotes ? (literal.lowerBound + 1)..<literal.upperBound : literal.lowerBound..<(literal.upperBound + 1)
        bytes.replaceSubrange(range, with: Array(replacement.utf8))
    }
}
