/// How far behind the primary a backfill lets its standbys fall before it waits for them.
///
/// Between batches the backfill reads `pg_stat_replication` on the primary and waits while a
/// standby's replay lag is over ``maximum``. A standby whose replay makes no progress for
/// ``stallLimit`` while the backfill waits (stopped, paused, cut off) is reported and no longer
/// waited for until it replays again, and one that leaves `pg_stat_replication` is reported and
/// dropped: a standby that is gone must not stop the backfill for ever, and one that replays
/// nothing has no queries for replay to cancel.
public struct ReplicaLagCeiling: Sendable, Equatable {
    /// The default ceiling, 10 s: a third of PostgreSQL's default `max_standby_streaming_delay`
    /// (30 s), so that a conflicting standby query still gets most of its grace before replay
    /// cancels it, and a lag a reading application usually tolerates.
    public static let defaultMaximum: Duration = .seconds(10)
    /// The default stall limit, 60 s.
    public static let defaultStallLimit: Duration = .seconds(60)

    /// The most replay lag the backfill starts a batch with.
    public var maximum: Duration
    /// How long a standby may replay nothing while the backfill waits before it is no longer waited for.
    public var stallLimit: Duration
    /// The shortest time between two lines saying that the backfill waits.
    public var noticeInterval: Duration
    /// How often the lag is read again while waiting.
    public var pollInterval: Duration

    /// A ceiling of `maximum`.
    public init(maximum: Duration = defaultMaximum, stallLimit: Duration = defaultStallLimit,
                noticeInterval: Duration = .seconds(5), pollInterval: Duration = .milliseconds(200)) {
        self.maximum = maximum
        self.stallLimit = stallLimit
        self.noticeInterval = noticeInterval
        self.pollInterval = pollInterval
    }
}
