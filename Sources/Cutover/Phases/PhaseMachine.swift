/// The rules of the migration phases: which step leads where, which steps are refused, and why.
///
/// A step runs only from its ``PhaseStep/sourcePhases``. Everything else is a
/// ``PhaseRefusal``, decided by where the phase stands against the step:
///
/// - a forward step asked for too early is ``PhaseRefusal/outOfOrder(_:phase:runFirst:)``,
///   naming the next forward step; asked for again later, it is
///   ``PhaseRefusal/alreadyDone(_:phase:)``;
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
    /// The phase `step` leads to from `phase`, or the refusal saying why it cannot run.
    public static func transition(
        from phase: MigrationPhase, by step: PhaseStep
    ) throws(PhaseRefusal) -> MigrationPhase {
        if step.sourcePhases.contains(phase) { return step.targetPhase }
        let isBeforeSources = step.sourcePhases.allSatisfy { phase.position < $0.position }
        switch step.direction {
        case .forward:
            if isBeforeSources, let runFirst = nextStep(from: phase) {
                throw .outOfOrder(step, phase: phase, runFirst: runFirst)
            }
            throw .alreadyDone(step, phase: phase)
        case .rollback:
            if isBeforeSources { throw .alreadyDone(step, phase: phase) }
            if phase == .contracted { throw .irreversible(step) }
            throw .outOfOrder(step, phase: phase, runFirst: try rollbackStep(from: phase))
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

    /// Whether `step` cannot be undone: true for contract only.
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
