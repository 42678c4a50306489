import Foundation
import PostgresClient

/// How far the fleet has followed a writer switch: which live registered instances report the
/// switch's epoch (or a later one), which are behind, and which went silent while it was awaited.
///
/// An instance counts while it heartbeats. One that was live during the wait and stops
/// heartbeating is *gone*: reported, and not waited for. One that was silent already when the
/// wait began is not counted at all.
///
/// ```swift
/// let caughtUp = try FleetCatchUp.wait(plan: "drafts", epoch: 7, timeout: .seconds(150), on: connection) { progress in
///     print("\(progress.following.count) of \(progress.counted) instances follow epoch 7")
/// }
/// ```
public struct FleetCatchUp: Sendable, Equatable {
    /// The epoch awaited.
    public var epoch: Int64
    /// Live instances that report the epoch or a later one.
    public var following: [FleetMember]
    /// Live instances that report an earlier epoch, or none.
    public var behind: [FleetMember]
    /// Instances live earlier in the wait that have stopped heartbeating since.
    public var gone: [FleetMember]
    /// Every instance seen live so far in the wait.
    public var seenLive: Set<String>

    /// Where the fleet stands against `epoch`, given the registry now and the instances seen
    /// live earlier in the same wait.
    public init(epoch: Int64, members: [FleetMember], seenLive earlier: Set<String> = []) {
        self.epoch = epoch
        let live = members.filter(\.isLive)
        following = live.filter { ($0.epoch ?? -1) >= epoch }
        behind = live.filter { ($0.epoch ?? -1) < epoch }
        gone = members.filter { !$0.isLive && earlier.contains($0.instanceID) }
        // A member that left the registry altogether is gone too.
        let listed = Set(members.map(\.instanceID))
        gone += earlier.subtracting(listed).sorted().map { FleetMember(instanceID: $0, applicationName: "", isLive: false, epoch: nil) }
        seenLive = earlier.union(live.map(\.instanceID))
    }

    /// The instances counted: live ones, and those gone during the wait.
    public var counted: Int { following.count + behind.count + gone.count }

    /// Whether no live instance is behind.
    public var isComplete: Bool { behind.isEmpty }

    /// Reads the registry every `interval` until no live instance is behind `epoch`, or until
    /// `timeout`; `progress` hears every reading that differs from the one before. Each reading
    /// is one statement, so it works through any pooler. Blocking.
    ///
    /// - Returns: the last reading; ``isComplete`` says whether the fleet caught up in time.
    public static func wait(plan: String, epoch: Int64, timeout: Duration, staleAfter: Duration = ReaderRegistry.defaultStaleAfter,
                            interval: Duration = .milliseconds(250), isStopRequested: () -> Bool = { false },
                            on connection: PostgresConnection, progress: (FleetCatchUp) -> Void = { _ in }) throws -> FleetCatchUp {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var last: FleetCatchUp?
        while true {
            let members = try ReaderRegistry.followers(plan: plan, staleAfter: staleAfter, on: connection)
            let reading = FleetCatchUp(epoch: epoch, members: members, seenLive: last?.seenLive ?? [])
            if reading != last { progress(reading) }
            last = reading
            if reading.isComplete || clock.now >= deadline || isStopRequested() { return reading }
            Thread.sleep(forTimeInterval: min(interval, deadline - clock.now) / .seconds(1))
        }
    }
}
