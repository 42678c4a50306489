/// The rules of the migration phases: which step leads where, which steps are refused, and why.
///
/// A step runs only from its ``PhaseStep/sourcePhases`` (and a revert from the phase its step
/// started from, when that step stopped half way). Everything else is decided by where the
/// phase stands against the step:
///
/// - a forward step asked for too early is ``PhaseRefusal/outOfOrder(_:phase:runFirst:)``,
///   naming the next forward step; asked for again later, it is already done
///   (``Decision/alreadyDone``), which is how a retry after a lost reply finds it;
/// - a rollback step asked for beyond its phases is out of order, naming the rollback
///   to run first; asked for before them, it is already done;
/// - after contract every rollback is ``PhaseRefusal/irreversible(_:)``.
///
/// Backfill is the one step that may run again from the phase it leads to: a
/// re-run on backfilled finds nothing left and stays backfilled.
///
/// ```swift
/// let next = try PhaseMachine.transition(from: .expanded, by: .switchModern)  // .modern
/// let undo = try PhaseMachine.rollbackStep(from: next)                        // .switchLegacy
/// ```
public enum PhaseMachine {
    /// What a step asked for from a phase comes to, when it is not refused.
    public enum Decision: Sendable, Hashable {
        /// The step runs and leads to this phase.
        case run(to: MigrationPhase)
        /// The step's effect is in place already (it ran before, perhaps in an attempt whose
        /// reply was lost): nothing runs, and the command reports it done.
        case alreadyDone
    }

    /// The forward steps in the order a migration takes them, expand first.
    public static let forwardSteps: [PhaseStep] = [.expand, .switchModern, .backfill, .contract]

    /// What `step` does from `phase`: run to a phase, nothing because it is done already, or
    /// the refusal saying why it cannot run.
    ///
    /// - Parameter partlyApplied: whether files of the step a revert undoes were applied
    ///   by an attempt that stopped before the phase changed (a killed or failed expand at
    ///   baseline, a contract stopped before its last file at backfilled). Only then does
    ///   a revert run from that phase; it leaves the phase where it is.
    public static func decide(
        _ step: PhaseStep, from phase: MigrationPhase, partlyApplied: Bool = false
    ) throws(PhaseRefusal) -> Decision {
        switch (step, phase) {
        case (.revertExpand, .baseline) where partlyApplied: return .run(to: .baseline)
        case (.revertContract, .backfilled) where partlyApplied: return .run(to: .backfilled)
        case (.revertContract, .contracted): throw .irreversible(step)
        case (.revertContract, _): return .alreadyDone
        default: break
        }
        if step.sourcePhases.contains(phase) { return .run(to: step.targetPhase) }
        let isBeforeSources = step.sourcePhases.allSatisfy { phase.position < $0.position }
        switch step.direction {
        case .forward:
            if isBeforeSources, let runFirst = nextStep(from: phase) {
                throw .outOfOrder(step, phase: phase, runFirst: runFirst)
            }
            return .alreadyDone
        case .rollback:
            if isBeforeSources { return .alreadyDone }
            if phase == .contracted { throw .irreversible(step) }
            throw .outOfOrder(step, phase: phase, runFirst: try rollbackStep(from: phase))
        }
    }

    /// The phase `step` leads to from `phase`, or the refusal saying why it cannot run; a step
    /// whose effect is in place already is refused as ``PhaseRefusal/alreadyDone(_:phase:)``.
    public static func transition(
        from phase: MigrationPhase, by step: PhaseStep
    ) throws(PhaseRefusal) -> MigrationPhase {
        switch try decide(step, from: phase) {
        case .run(let target): return target
        case .alreadyDone: throw .alreadyDone(step, phase: phase)
        }
    }

    /// The rollback step that undoes `kind`: switch legacy for the switch, revert expand for
    /// expand, revert contract for a contract stopped before its point of no return; nil for
    /// backfill, whose documents need no undoing.
    public static func rollbackStep(undoing kind: PlanStep.Kind) -> PhaseStep? {
        switch kind {
        case .expand: .revertExpand
        case .switch: .switchLegacy
        case .contract: .revertContract
        case .backfill: nil
        }
    }

    /// The one step `phase rollback` runs from `phase`: revert expand from expanded, switch legacy after the switch.
    ///
    /// Refused in baseline, where there is nothing to roll back, and in
    /// contracted, where contract has removed what a rollback would need.
    public static func rollbackStep(from phase: MigrationPhase) throws(PhaseRefusal) -> PhaseStep {
        switch phase {
        case .baseline: throw .nothingToRollBack
        case .expanded: return .revertExpand
        case .modern, .backfilled: return .switchLegacy
        case .contracted: throw .irreversible(nil)
        }
    }

    /// The forward step an operator runs next from `phase`, or nil once contracted.
    public static func nextStep(from phase: MigrationPhase) -> PhaseStep? {
        switch phase {
        case .baseline: .expand
        case .expanded: .switchModern
        case .modern: .backfill
        case .backfilled: .contract
        case .contracted: nil
        }
    }

    /// Whether forward `step` has happened by `phase`: the phase is its target or beyond.
    /// Always false for a rollback step.
    public static func hasHappened(_ step: PhaseStep, by phase: MigrationPhase) -> Bool {
        step.direction == .forward && phase.position >= step.targetPhase.position
    }

    /// Whether `step` cannot be undone once it has finished: true for contract only.
    public static func isIrreversible(_ step: PhaseStep) -> Bool {
        step == .contract
    }
}

extension MigrationPhase {
    /// The phase's place in the forward order, baseline first.
    fileprivate var position: Int {
        Self.allCases.firstIndex(of: self) ?? 0
    }
}
