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
    /// Removes what expand added: expanded to baseline.
    case revertExpand

    /// Whether a step takes the migration further or undoes part of it.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Towards contracted.
        case forward
        /// Back towards baseline.
        case rollback
    }

    /// The step's stable name: `expand`, `switch modern`, `switch legacy`, `backfill`, `contract` or `revert expand`.
    public var name: String {
        switch self {
        case .expand: "expand"
        case .switchModern: "switch modern"
        case .switchLegacy: "switch legacy"
        case .backfill: "backfill"
        case .contract: "contract"
        case .revertExpand: "revert expand"
        }
    }

    /// The step with this stable name, or nil when no step has it.
    public init?(name: String) {
        guard let step = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = step
    }

    /// The step's name.
    public var description: String { name }

    /// Forward for expand, switch modern, backfill and contract; rollback for switch legacy and revert expand.
    public var direction: Direction {
        switch self {
        case .expand, .switchModern, .backfill, .contract: .forward
        case .switchLegacy, .revertExpand: .rollback
        }
    }

    /// The phases the step may run from.
    public var sourcePhases: [MigrationPhase] {
        switch self {
        case .expand: [.baseline]
        case .switchModern: [.expanded]
        case .switchLegacy: [.modern, .backfilled]
        case .backfill: [.modern, .backfilled]
        case .contract: [.backfilled]
        case .revertExpand: [.expanded]
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
        }
    }
}
