/// What a plan's backfill adapts its pace to: how long a batch should take, and when to wait.
///
/// The backfill makes its batches larger or smaller so that each takes about
/// ``targetBatchTime``, and waits before a batch while the database is busier than the plan
/// allows: more than ``maximumActiveSessions`` sessions running a statement, or
/// ``throttleQuery`` answering true. The replica lag ceiling is ``PlanBackfill/maximumReplicaLag``.
public struct PlanBackfillThrottle: Sendable, Hashable {
    /// The time each batch should take; zero keeps every batch at the batch size.
    public var targetBatchTime: Duration
    /// The most sessions of the database that may be running a statement when a batch starts
    /// (the backfill's own excluded); nil does not look.
    public var maximumActiveSessions: Int?
    /// A query of the operator's own, run read-only before each batch: while its first column
    /// is true (or a number above 0), the backfill waits; nil runs none.
    public var throttleQuery: String?

    /// Batches of about 50 ms, no session ceiling, no throttle query.
    public static let standard = PlanBackfillThrottle(targetBatchTime: PlanLimits.defaultTargetBatchTime)

    /// A throttle of these targets.
    public init(targetBatchTime: Duration, maximumActiveSessions: Int? = nil, throttleQuery: String? = nil) {
        self.targetBatchTime = targetBatchTime
        self.maximumActiveSessions = maximumActiveSessions
        self.throttleQuery = throttleQuery
    }

    /// The manifest keys that set it, in a format-1 backfill step and a format-2 `backfill` object.
    static let keys = ["targetBatchTime", "maxActiveSessions", "throttleQuery"]

    /// The throttle `object` sets: each key optional, the others as ``standard``.
    static func decode(from object: ManifestObject) throws(ManifestFault) -> PlanBackfillThrottle {
        var throttle = PlanBackfillThrottle.standard
        if let value = object.optional("targetBatchTime") {
            let time = try PlanManifestDecoder.duration(value)
            guard time <= PlanLimits.maximumTargetBatchTime else {
                throw value.fault(.durationTooLong(try value.string(), maximum: PlanLimits.maximumTargetBatchTime))
            }
            throttle.targetBatchTime = time
        }
        throttle.maximumActiveSessions = try object.optional("maxActiveSessions")?.integer(in: PlanLimits.activeSessions)
        throttle.throttleQuery = try object.optional("throttleQuery")?.text(length: PlanLimits.inlineSQLLength, allowingLineBreaks: true)
        return throttle
    }
}
