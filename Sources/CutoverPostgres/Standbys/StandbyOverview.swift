/// The standbys found now, and what the next step should beware of on them.
public struct StandbyOverview: Sendable, Equatable {
    /// Every standby found, reported and listed.
    public var nodes: [StandbyNode]
    /// Warnings, each naming its standby: settings that make recovery conflicts likely, and
    /// standbys that could not be inspected.
    public var warnings: [String]

    /// An overview of `nodes` with its `warnings`.
    public init(nodes: [StandbyNode], warnings: [String]) {
        self.nodes = nodes
        self.warnings = warnings
    }
}
