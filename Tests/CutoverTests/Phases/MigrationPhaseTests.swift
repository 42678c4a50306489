import Cutover
import Testing

@Suite("Migration phases and steps")
struct MigrationPhaseTests {
    @Test("the phases keep their stable codes, in order")
    func phaseCodes() {
        #expect(MigrationPhase.allCases.map(\.rawValue) == ["baseline", "expanded", "modern", "backfilled", "contracted"])
        #expect(MigrationPhase.allCases.map(\.description) == MigrationPhase.allCases.map(\.rawValue))
    }

    @Test("the legacy writer writes until the switch, the modern writer after it")
    func writerPaths() {
        #expect(MigrationPhase.allCases.map(\.writerPath) == [.legacy, .legacy, .modern, .modern, .modern])
    }

    @Test("v1 exists until contract; v2 exists from expand")
    func representations() {
        #expect(MigrationPhase.allCases.map(\.hasV1Representation) == [true, true, true, true, false])
        #expect(MigrationPhase.allCases.map(\.hasV2Representation) == [false, true, true, true, true])
    }

    @Test("every phase has at least one representation, and a writer whose format exists")
    func writerHasItsFormat() {
        for phase in MigrationPhase.allCases {
            let writes = phase.writerPath == .legacy ? phase.hasV1Representation : phase.hasV2Representation
            #expect(writes, "\(phase)")
        }
    }

    @Test("steps keep their stable names and read back from them")
    func stepNames() {
        #expect(PhaseStep.allCases.map(\.name)
            == ["expand", "switch modern", "switch legacy", "backfill", "contract", "revert expand", "revert contract"])
        for step in PhaseStep.allCases {
            #expect(PhaseStep(name: step.name) == step)
            #expect(step.description == step.name)
        }
        #expect(PhaseStep(name: "switchModern") == nil)
        #expect(PhaseStep(name: "Expand") == nil)
        #expect(PhaseStep(name: "") == nil)
    }

    @Test("switch legacy and revert expand are the rollbacks")
    func directions() {
        #expect(PhaseStep.allCases.filter { $0.direction == .rollback } == [.switchLegacy, .revertExpand, .revertContract])
        #expect(PhaseStep.Direction.allCases.map(\.rawValue) == ["forward", "rollback"])
    }
}
