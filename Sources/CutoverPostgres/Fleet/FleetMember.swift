/// One registered instance, as the wait for the fleet sees it: whether it is live and which
/// epoch of a plan's writer path it last reported following.
public struct FleetMember: Sendable, Equatable, CustomStringConvertible {
    /// The instance's registered ID.
    public var instanceID: String
    /// The application it belongs to.
    public var applicationName: String
    /// Whether it heartbeat within the staleness limit it was listed with.
    public var isLive: Bool
    /// The epoch it last reported following; nil when it never reported one for the plan.
    public var epoch: Int64?

    /// A member as listed.
    public init(instanceID: String, applicationName: String, isLive: Bool, epoch: Int64?) {
        self.instanceID = instanceID
        self.applicationName = applicationName
        self.isLive = isLive
        self.epoch = epoch
    }

    /// The ID and what it follows, for a progress line: `web-1 (epoch 6)`, `batch-2 (no epoch reported)`.
    public var description: String {
        "\(instanceID) (\(epoch.map { "epoch \($0)" } ?? "no epoch reported"))"
    }
}
