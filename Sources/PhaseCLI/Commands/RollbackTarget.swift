import Cutover

/// What `phase rollback` undoes, as the operator names it.
public enum RollbackTarget: String, Sendable, CaseIterable {
    /// The writer switch: back to the legacy writer.
    case `switch`
    /// Expand: what it added, or what an expand that stopped half way left.
    case expand
    /// A contract that stopped before its point of no return.
    case contract

    /// The plan step it undoes.
    public var kind: PlanStep.Kind {
        switch self {
        case .switch: .switch
        case .expand: .expand
        case .contract: .contract
        }
    }
}
