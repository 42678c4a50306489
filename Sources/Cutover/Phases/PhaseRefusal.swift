/// Why a step cannot run in the current phase, with what to do instead.
///
/// Each description is one line naming the phase, the step and the way on, for example
/// `cannot contract in phase modern: contract runs from phase backfilled; run backfill first`.
public enum PhaseRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step's effect is already in place, so running it would change nothing.
    case alreadyDone(PhaseStep, phase: MigrationPhase)

    /// The step cannot run yet from this phase; `runFirst` is the step that leads towards it.
    case outOfOrder(PhaseStep, phase: MigrationPhase, runFirst: PhaseStep)

    /// A rollback was asked for in baseline, where nothing has been done.
    case nothingToRollBack

    /// A rollback was asked for after contract, which removed the v1 representation for good.
    ///
    /// The step is nil when the refusal answers ``PhaseMachine/rollbackStep(from:)``
    /// rather than a named step.
    case irreversible(PhaseStep?)

    /// The phase the refused step was asked to run from.
    public var phase: MigrationPhase {
        switch self {
        case .alreadyDone(_, let phase), .outOfOrder(_, let phase, _): phase
        case .nothingToRollBack: .baseline
        case .irreversible: .contracted
        }
    }

    /// The refused step, or nil when the refusal is of a rollback as such.
    public var step: PhaseStep? {
        switch self {
        case .alreadyDone(let step, _), .outOfOrder(let step, _, _): step
        case .nothingToRollBack: nil
        case .irreversible(let step): step
        }
    }

    /// One line: the step, the phase, why not, and what to do instead.
    public var description: String {
        let attempt = "cannot \(step?.name ?? "roll back") in phase \(phase)"
        switch self {
        case .alreadyDone(let step, let phase):
            let onward = PhaseMachine.nextStep(from: phase).map { "the next step is \($0)" }
                ?? "the migration is complete, and a further change needs a new plan"
            return "\(attempt): already \(Self.doneState(of: step)); \(onward)"
        case .outOfOrder(let step, _, let runFirst):
            let sources = step.sourcePhases.map(\.rawValue).joined(separator: " or ")
            return "\(attempt): \(step) runs from phase \(sources); run \(runFirst) first"
        case .nothingToRollBack:
            return "\(attempt): nothing to roll back; the next step is \(PhaseStep.expand)"
        case .irreversible:
            return "\(attempt): contract is irreversible and the v1 representation is gone; "
                + "fix forward with a new expand that re-adds what is needed, "
                + "restoring data from a backup if it must come back"
        }
    }

    /// How the table stands once `step` has run, as in "already expanded".
    private static func doneState(of step: PhaseStep) -> String {
        switch step {
        case .expand: "expanded"
        case .switchModern: "on the modern writer"
        case .switchLegacy: "on the legacy writer"
        case .backfill: "backfilled"
        case .contract: "contracted"
        case .revertExpand: "at baseline"
        case .revertContract: "without any of contract applied"
        }
    }
}
