/// One move between migration phases: a forward step of the migration or the rollback of one.
///
/// ``name`` is the stable spelling used in history rows and by the `phase` CLI.
/// ``PhaseMachine/transition(from:by:)`` says where each step leads.
public enum PhaseStep: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Adds the v2 representation beside v1: baseline to expanded.
    case expand
    /// Moves new saves to the modern writer: expanded to modern.
    case switchModern
    /// Moves new saves back to the legacy writer: modern or backfilled to expanded.
    case switchLegacy
    /// Gives every row that has only v1 its v2 representation: modern to backfilled, and backfilled again.
    case backfill
    /// Removes the v1 representation, irreversibly: backfilled to contracted.
    case contract
    /// Removes what expand added: expanded to baseline, or what a stopped expand left at baseline.
    case revertExpand
    /// Undoes what a stopped contract applied before its point of no return: backfilled stays backfilled.
    case revertContract

    /// Whether a step takes the migration further or undoes part of it.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Towards contracted.
        case forward
        /// Back towards baseline.
        case rollback
    }

    /// The step's stable name: `expand`, `switch modern`, `switch legacy`, `backfill`, `contract`,
    /// `revert expand` or `revert contract`.
    public var name: String {
        switch self {
        case .expand: "expand"
        case .switchModern: "switch modern"
        case .switchLegacy: "switch legacy"
        case .backfill: "backfill"
        case .contract: "contract"
        case .revertExpand: "revert expand"
        case .revertContract: "revert contract"
        }
    }

    /// The step with this stable name, or nil when no step has it.
    public init?(name: String) {
        guard let step = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = step
    }

    /// The step's name.
    public var description: String { name }

    /// Forward for expand, switch modern, backfill and contract; rollback for switch legacy and the reverts.
    public var direction: Direction {
        switch self {
        case .expand, .switchModern, .backfill, .contract: .forward
        case .switchLegacy, .revertExpand, .revertContract: .rollback
        }
    }

    /// The phases the step may run from when nothing is half done. A revert also runs from
    /// the phase its step starts from when that step stopped half way (see
    /// ``PhaseMachine/decide(_:from:partlyApplied:)``).
    public var sourcePhases: [MigrationPhase] {
        switch self {
        case .expand: [.baseline]
        case .switchModern: [.expanded]
        case .switchLegacy: [.modern, .backfilled]
        case .backfill: [.modern, .backfilled]
        case .contract: [.backfilled]
        case .revertExpand: [.expanded]
        case .revertContract: []
        }
    }

    /// The phase the step leads to.
    public var targetPhase: MigrationPhase {
        switch self {
        case .expand: .expanded
        case .switchModern: .modern
        case .switchLegacy: .expanded
        case .backfill: .backfilled
        case .contract: .contracted
        case .revertExpand: .baseline
        case .revertContract: .backfilled
        }
    }
}
