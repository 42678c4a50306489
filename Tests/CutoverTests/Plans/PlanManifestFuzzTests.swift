import Cutover
import Testing

/// Damaged and hostile variants of a valid manifest, generated from fixed seeds so every run replays the same bytes.
@Suite("Plan manifests under damage", .timeLimit(.minutes(3)))
struct PlanManifestFuzzTests {
    static let seeds: [UInt64] = [1, 2, 0xC0FF_EE]
    static let variantsPerSeed = 1_500

    @Test("every variant reads as a plan that keeps every rule, or as a one-line typed refusal", arguments: seeds)
    func variants(seed: UInt64) {
        var mutator = JSONMutator(seed: seed)
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
            if let backfill = step.backfill {
                #expect(PlanLimits.batchSize.contains(backfill.batchSize))
                #expect(PlanLimits.niceRatio.contains(backfill.niceRatio))
            }
        }
    }
}

/// Damages manifests: cuts, flips, inserts and deletes bytes, and swaps values for hostile ones.
