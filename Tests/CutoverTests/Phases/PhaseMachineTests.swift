import Cutover
import Testing

@Suite("The phase machine")
struct PhaseMachineTests {
    /// What one step does from one phase: lead to a phase, or be refused with exactly this line.
    struct Row: Sendable, CustomTestStringConvertible {
        let phase: MigrationPhase
        let step: PhaseStep
        let outcome: Outcome

        enum Outcome: Sendable, Equatable {
            case leadsTo(MigrationPhase)
            case refused(String)
        }

        var testDescription: String { "\(step) from \(phase)" }
    }

    private static let complete = "the migration is complete, and a further change needs a new plan"
    private static let irreversible = "contract is irreversible and the v1 representation is gone; "
        + "fix forward with a new expand that re-adds what is needed, "
        + "restoring data from a backup if it must come back"

    /// Every (phase, step) pair.
    static let table: [Row] = [
        Row(phase: .baseline, step: .expand, outcome: .leadsTo(.expanded)),
        Row(phase: .baseline, step: .switchModern, outcome: .refused(
            "cannot switch modern in phase baseline: switch modern runs from phase expanded; run expand first")),
        Row(phase: .baseline, step: .switchLegacy, outcome: .refused(
            "cannot switch legacy in phase baseline: already on the legacy writer; the next step is expand")),
        Row(phase: .baseline, step: .backfill, outcome: .refused(
            "cannot backfill in phase baseline: backfill runs from phase modern or backfilled; run expand first")),
        Row(phase: .baseline, step: .contract, outcome: .refused(
            "cannot contract in phase baseline: contract runs from phase backfilled; run expand first")),
        Row(phase: .baseline, step: .revertExpand, outcome: .refused(
            "cannot revert expand in phase baseline: already at baseline; the next step is expand")),
        Row(phase: .baseline, step: .revertContract, outcome: .refused(
            "cannot revert contract in phase baseline: already without any of contract applied; the next step is expand")),

        Row(phase: .expanded, step: .expand, outcome: .refused(
            "cannot expand in phase expanded: already expanded; the next step is switch modern")),
        Row(phase: .expanded, step: .switchModern, outcome: .leadsTo(.modern)),
        Row(phase: .expanded, step: .switchLegacy, outcome: .refused(
            "cannot switch legacy in phase expanded: already on the legacy writer; the next step is switch modern")),
        Row(phase: .expanded, step: .backfill, outcome: .refused(
            "cannot backfill in phase expanded: backfill runs from phase modern or backfilled; run switch modern first")),
        Row(phase: .expanded, step: .contract, outcome: .refused(
            "cannot contract in phase expanded: contract runs from phase backfilled; run switch modern first")),
        Row(phase: .expanded, step: .revertExpand, outcome: .leadsTo(.baseline)),
        Row(phase: .expanded, step: .revertContract, outcome: .refused(
            "cannot revert contract in phase expanded: already without any of contract applied; the next step is switch modern")),

        Row(phase: .modern, step: .expand, outcome: .refused(
            "cannot expand in phase modern: already expanded; the next step is backfill")),
        Row(phase: .modern, step: .switchModern, outcome: .refused(
            "cannot switch modern in phase modern: already on the modern writer; the next step is backfill")),
        Row(phase: .modern, step: .switchLegacy, outcome: .leadsTo(.expanded)),
        Row(phase: .modern, step: .backfill, outcome: .leadsTo(.backfilled)),
        Row(phase: .modern, step: .contract, outcome: .refused(
            "cannot contract in phase modern: contract runs from phase backfilled; run backfill first")),
        Row(phase: .modern, step: .revertExpand, outcome: .refused(
            "cannot revert expand in phase modern: revert expand runs from phase expanded; run switch legacy first")),
        Row(phase: .modern, step: .revertContract, outcome: .refused(
            "cannot revert contract in phase modern: already without any of contract applied; the next step is backfill")),

        Row(phase: .backfilled, step: .expand, outcome: .refused(
            "cannot expand in phase backfilled: already expanded; the next step is contract")),
        Row(phase: .backfilled, step: .switchModern, outcome: .refused(
            "cannot switch modern in phase backfilled: already on the modern writer; the next step is contract")),
        Row(phase: .backfilled, step: .switchLegacy, outcome: .leadsTo(.expanded)),
        Row(phase: .backfilled, step: .backfill, outcome: .leadsTo(.backfilled)),
        Row(phase: .backfilled, step: .contract, outcome: .leadsTo(.contracted)),
        Row(phase: .backfilled, step: .revertExpand, outcome: .refused(
            "cannot revert expand in phase backfilled: revert expand runs from phase expanded; run switch legacy first")),
        Row(phase: .backfilled, step: .revertContract, outcome: .refused(
            "cannot revert contract in phase backfilled: already without any of contract applied; the next step is contract")),

        Row(phase: .contracted, step: .expand, outcome: .refused(
            "cannot expand in phase contracted: already expanded; \(complete)")),
        Row(phase: .contracted, step: .switchModern, outcome: .refused(
            "cannot switch modern in phase contracted: already on the modern writer; \(complete)")),
        Row(phase: .contracted, step: .switchLegacy, outcome: .refused(
            "cannot switch legacy in phase contracted: \(irreversible)")),
        Row(phase: .contracted, step: .backfill, outcome: .refused(
            "cannot backfill in phase contracted: already backfilled; \(complete)")),
        Row(phase: .contracted, step: .contract, outcome: .refused(
            "cannot contract in phase contracted: already contracted; \(complete)")),
        Row(phase: .contracted, step: .revertExpand, outcome: .refused(
            "cannot revert expand in phase contracted: \(irreversible)")),
        Row(phase: .contracted, step: .revertContract, outcome: .refused(
            "cannot revert contract in phase contracted: \(irreversible)")),
    ]

    @Test("the table covers every phase and step exactly once")
    func tableIsExhaustive() {
        let pairs = Self.table.map { "\($0.phase) \($0.step)" }
        let expected = MigrationPhase.allCases.flatMap { phase in PhaseStep.allCases.map { "\(phase) \($0)" } }
        #expect(pairs.sorted() == expected.sorted())
    }

    @Test("each step from each phase leads where the table says, or is refused with its line", arguments: table)
    func transition(_ row: Row) {
        do throws(PhaseRefusal) {
            let next = try PhaseMachine.transition(from: row.phase, by: row.step)
            #expect(row.outcome == .leadsTo(next))
        } catch {
            #expect(row.outcome == .refused(error.description))
            #expect(error.phase == row.phase)
            #expect(error.step == row.step)
        }
    }

    @Test("refusals carry their reason as a value")
    func refusalValues() {
        #expect(throws: PhaseRefusal.alreadyDone(.switchModern, phase: .modern)) {
            try PhaseMachine.transition(from: .modern, by: .switchModern)
        }
        #expect(throws: PhaseRefusal.outOfOrder(.contract, phase: .modern, runFirst: .backfill)) {
            try PhaseMachine.transition(from: .modern, by: .contract)
        }
        #expect(throws: PhaseRefusal.outOfOrder(.revertExpand, phase: .backfilled, runFirst: .switchLegacy)) {
            try PhaseMachine.transition(from: .backfilled, by: .revertExpand)
        }
        #expect(throws: PhaseRefusal.irreversible(.revertExpand)) {
            try PhaseMachine.transition(from: .contracted, by: .revertExpand)
        }
    }

    @Test("the step a refusal says to run first is one the phase accepts")
    func runFirstIsAccepted() throws {
        var outOfOrder = 0
        for phase in MigrationPhase.allCases {
            for step in PhaseStep.allCases {
                do throws(PhaseRefusal) {
                    _ = try PhaseMachine.transition(from: phase, by: step)
                } catch {
                    guard case .outOfOrder(_, _, let runFirst) = error else { continue }
                    outOfOrder += 1
                    #expect(throws: Never.self, "in \(phase), \(step) says to run \(runFirst) first") {
                        try PhaseMachine.transition(from: phase, by: runFirst)
                    }
                }
            }
        }
        // Every phase but the last refuses some step as out of order.
        #expect(outOfOrder >= MigrationPhase.allCases.count - 1)
    }

    @Test("rollback runs revert expand from expanded and switch legacy after the switch")
    func rollbackSteps() throws {
        #expect(try PhaseMachine.rollbackStep(from: .expanded) == .revertExpand)
        #expect(try PhaseMachine.rollbackStep(from: .modern) == .switchLegacy)
        #expect(try PhaseMachine.rollbackStep(from: .backfilled) == .switchLegacy)
    }

    @Test("rollback from baseline has nothing to undo")
    func rollbackFromBaseline() {
        #expect(throws: PhaseRefusal.nothingToRollBack) { try PhaseMachine.rollbackStep(from: .baseline) }
        #expect(PhaseRefusal.nothingToRollBack.description
            == "cannot roll back in phase baseline: nothing to roll back; the next step is expand")
        #expect(PhaseRefusal.nothingToRollBack.phase == .baseline)
        #expect(PhaseRefusal.nothingToRollBack.step == nil)
    }

    @Test("rollback from contracted is refused with the reason and the forward fix")
    func rollbackFromContracted() {
        #expect(throws: PhaseRefusal.irreversible(nil)) { try PhaseMachine.rollbackStep(from: .contracted) }
        #expect(PhaseRefusal.irreversible(nil).description == "cannot roll back in phase contracted: \(Self.irreversible)")
        #expect(PhaseRefusal.irreversible(nil).phase == .contracted)
    }

    @Test("rolling back repeatedly from any phase before contract reaches baseline")
    func rollbackReachesBaseline() throws {
        for start in MigrationPhase.allCases where start != .contracted {
            var phase = start
            var steps: [PhaseStep] = []
            while phase != .baseline {
                let step = try PhaseMachine.rollbackStep(from: phase)
                #expect(step.direction == .rollback)
                steps.append(step)
                phase = try PhaseMachine.transition(from: phase, by: step)
            }
            #expect(steps.count <= 2, "from \(start): \(steps)")
        }
    }

    @Test("the next steps lead from baseline to contracted in order, then stop")
    func nextSteps() throws {
        var phase = MigrationPhase.baseline
        var visited = [phase]
        while let step = PhaseMachine.nextStep(from: phase) {
            #expect(step.direction == .forward)
            phase = try PhaseMachine.transition(from: phase, by: step)
            visited.append(phase)
        }
        #expect(visited == MigrationPhase.allCases)
        #expect(PhaseMachine.nextStep(from: .backfilled) == .contract)
        #expect(PhaseMachine.nextStep(from: .contracted) == nil)
    }

    @Test("backfill may run again on backfilled and stays there")
    func backfillIsRepeatable() throws {
        var phase = try PhaseMachine.transition(from: .modern, by: .backfill)
        for _ in 0..<3 {
            phase = try PhaseMachine.transition(from: phase, by: .backfill)
            #expect(phase == .backfilled)
        }
    }

    @Test("contract is the only irreversible step")
    func irreversibleSteps() {
        #expect(PhaseStep.allCases.filter(PhaseMachine.isIrreversible) == [.contract])
    }
    @Test("a step asked for again after it happened is already done, not refused")
    func repeatedStepsAreDone() throws {
        for phase in MigrationPhase.allCases {
            for step in PhaseMachine.forwardSteps where PhaseMachine.hasHappened(step, by: phase) {
                let decision = try PhaseMachine.decide(step, from: phase)
                if step == .backfill && phase == .backfilled {
                    #expect(decision == .run(to: .backfilled))
                } else {
                    #expect(decision == .alreadyDone, "\(step) from \(phase)")
                }
            }
        }
        #expect(try PhaseMachine.decide(.switchLegacy, from: .expanded) == .alreadyDone)
        #expect(try PhaseMachine.decide(.switchLegacy, from: .baseline) == .alreadyDone)
        #expect(try PhaseMachine.decide(.revertExpand, from: .baseline) == .alreadyDone)
    }

    @Test("a rollback named by its step never goes further than that step")
    func namedRollbacksStopAtTheirStep() throws {
        #expect(PhaseMachine.rollbackStep(undoing: .switch) == .switchLegacy)
        #expect(PhaseMachine.rollbackStep(undoing: .expand) == .revertExpand)
        #expect(PhaseMachine.rollbackStep(undoing: .contract) == .revertContract)
        #expect(PhaseMachine.rollbackStep(undoing: .backfill) == nil)
        // Undoing the switch a second time, once it is undone, changes nothing: it does not go
        // on to revert expand.
        let afterSwitchBack = try PhaseMachine.transition(from: .modern, by: .switchLegacy)
        #expect(try PhaseMachine.decide(.switchLegacy, from: afterSwitchBack) == .alreadyDone)
        // Reverting expand while the modern writer writes is refused, naming the switch.
        #expect(throws: PhaseRefusal.outOfOrder(.revertExpand, phase: .modern, runFirst: .switchLegacy)) {
            try PhaseMachine.decide(.revertExpand, from: .modern)
        }
    }

    @Test("a revert undoes a step that stopped half way, and stays in its phase")
    func revertsOfHalfDoneSteps() throws {
        #expect(try PhaseMachine.decide(.revertExpand, from: .baseline, partlyApplied: true) == .run(to: .baseline))
        #expect(try PhaseMachine.decide(.revertContract, from: .backfilled, partlyApplied: true) == .run(to: .backfilled))
        #expect(try PhaseMachine.decide(.revertContract, from: .backfilled) == .alreadyDone)
        #expect(throws: PhaseRefusal.irreversible(.revertContract)) {
            try PhaseMachine.decide(.revertContract, from: .contracted, partlyApplied: true)
        }
        // Half-done work is no licence to skip a phase.
        #expect(throws: PhaseRefusal.outOfOrder(.revertExpand, phase: .backfilled, runFirst: .switchLegacy)) {
            try PhaseMachine.decide(.revertExpand, from: .backfilled, partlyApplied: true)
        }
    }

    @Test("the forward steps are listed once, in the order the next steps take them")
    func forwardStepsInOrder() {
        var phase = MigrationPhase.baseline
        var steps: [PhaseStep] = []
        while let step = PhaseMachine.nextStep(from: phase) {
            steps.append(step)
            phase = step.targetPhase
        }
        #expect(steps == PhaseMachine.forwardSteps)
        #expect(PhaseMachine.hasHappened(.contract, by: .contracted))
        #expect(!PhaseMachine.hasHappened(.contract, by: .backfilled))
        #expect(!PhaseMachine.hasHappened(.switchLegacy, by: .contracted))
    }
}
