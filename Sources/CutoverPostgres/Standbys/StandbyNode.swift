/// One standby of the fleet: as its upstream reports it, as it says itself when it is listed,
/// or both when the two were matched.
public struct StandbyNode: Sendable, Equatable {
    /// What an operator calls it: its address when listed and reachable, else its
    /// application name and address as reported.
    public var name: String
    /// The upstream's row for it, when reported (matched by application name).
    public var reported: StandbyReplication?
    /// What it says itself, when listed and reachable.
    public var inspection: StandbyInspection?
    /// Why it could not be inspected, or cannot be trusted as a standby of this primary; nil
    /// when inspected.
    public var problem: String?
    /// How a listed standby was matched to a reported one, or why it was not.
    public var matchNote: String?
    /// Whether the operator allowed contract to go on without inspecting it.
    public var isAllowedUninspected: Bool

    /// Whether its sessions and settings were read.
    public var isInspected: Bool { inspection != nil && problem == nil }

    /// Whether contract must refuse because of it: reported or listed, yet not inspected, and
    /// not allowed to be.
    public var blocksContract: Bool { !isInspected && !isAllowedUninspected && (reported?.isStandby ?? true) }
}
