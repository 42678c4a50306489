import Foundation
import PostgresClient

/// Measures the replay lag of the standbys streaming from the primary, between backfill
/// batches, and waits while one is over the ceiling.
///
/// PostgreSQL's `replay_lag` is measured only when a standby replays past a position the
/// primary noted the time of, so it stands still while replay does (a paused or stuck standby
/// shows its last, small, lag), it stays at a catch-up's large value until the next reply, and
/// it goes NULL once the standby is caught up and idle: it is shown, never waited on. The
/// monitor notes the time of the primary's WAL position at each measurement itself, and a
/// standby's lag is the age of the oldest noted position it has not replayed, 0 when it has
/// replayed all the WAL the primary has. Lag from WAL written before the backfill's first
/// measurement counts from that measurement, so it is never overstated. The primary learns a
/// standby's replay position from its replies (`wal_receiver_status_interval`, 10 s by
/// default, and whenever WAL arrives), so a lag read on an idle primary can be that old.
package final class StandbyLagMonitor {
    /// One standby's lag now.
    package struct Lag: Equatable {
        package var name: String
        package var lag: Duration
        package var bytes: Int64
    }

    /// The ceiling; an operator's retune changes its maximum between batches.
    var ceiling: ReplicaLagCeiling
    private let log: (String) -> Void
    private let clock = ContinuousClock()
    private var noted: [(position: WALPosition, at: ContinuousClock.Instant)] = []
    /// Each standby's last replay position and when it last moved, by WAL sender.
    private var replay: [Int32: (position: WALPosition?, since: ContinuousClock.Instant, name: String)] = [:]
    private var ignored: Set<Int32> = []
    private var hiddenReported: Set<String> = []
    private var lastNotice: ContinuousClock.Instant?
    /// When the last measurement was taken: the instant its lags are ages at.
    private(set) var measuredAt: ContinuousClock.Instant?
    /// Whether the last measurement found a standby streaming from the primary.
    private(set) var sawStandbys = false
    private static let maximumNoted = 100_000

    package init(ceiling: ReplicaLagCeiling, log: @escaping (String) -> Void) {
        self.ceiling = ceiling
        self.log = log
    }

    /// Notes the primary's WAL position now and returns the lag of every standby waited for.
    package func measure(on connection: PostgresConnection) throws -> [Lag] {
        // One exchange when no WAL sender runs, as on a server without standbys: the list of
        // them, which reads every session's activity, only when there is one to list. The
        // senders' own function, not the pg_stat_replication view over it: the view's
        // rewriting took most of this query's time, before every batch.
        let here = try connection.query("""
            SELECT pg_catalog.pg_current_wal_insert_lsn()::text AS lsn,
                   EXISTS (SELECT FROM pg_catalog.pg_stat_get_wal_senders()) AS senders
            """)[0]
        let position = try here.decode(String.self, "lsn")
        let rows = try here.decode(Bool.self, "senders")
            ? try StandbyReplication.list(upstream: "primary", on: connection).filter(\.isStandby) : []
        let now = clock.now
        measuredAt = now
        sawStandbys = !rows.isEmpty
        if let position = WALPosition(text: position), noted.last?.position != position {
            noted.append((position, now))
            if noted.count > Self.maximumNoted { noted.removeFirst(noted.count - Self.maximumNoted) }
        }
        for (pid, gone) in replay where !rows.contains(where: { $0.pid == pid }) {
            log("standby \(gone.name) no longer streams from the primary; backfill no longer waits for it")
            replay[pid] = nil
            ignored.remove(pid)
        }
        var lags: [Lag] = []
        for row in rows {
            guard let bytes = row.lagBytes, let replayed = row.replayPosition else {
                // One that has not replied since it connected is measured from its first reply.
                if !row.isVisible, hiddenReported.insert(row.name).inserted {
                    log("standby \(row.name): its replay position is hidden from this role (grant it pg_monitor), so backfill cannot keep its lag under the ceiling")
                }
                continue
            }
            if let known = replay[row.pid], known.position == replayed {
                // Not moved since `known.since`.
            } else {
                if ignored.remove(row.pid) != nil { log("standby \(row.name) replays again; backfill waits for it again") }
                replay[row.pid] = (replayed, now, row.name)
            }
            guard !ignored.contains(row.pid) else { continue }
            var lag = Duration.zero
            if bytes > 0 {
                let oldest = noted.first { $0.position > replayed }
                lag = oldest.map { now - $0.at } ?? .zero
            }
            lags.append(Lag(name: row.name, lag: lag, bytes: bytes))
        }
        // Positions every standby waited for has replayed are no longer needed.
        if let lowest = rows.filter({ !ignored.contains($0.pid) }).compactMap(\.replayPosition).min() {
            noted.removeAll { $0.position <= lowest }
        } else {
            noted.removeAll()
        }
        return lags
    }

    /// Waits until every standby waited for is at or under the ceiling, and returns the lags
    /// then and the time waited, nil when it did not wait.
    ///
    /// - Parameter holds: hears why when the monitor begins to hold the batch.
    /// - Throws: ``BackfillError/stopped(converted:)`` when a stop is requested while waiting.
    func waitUnderCeiling(on connection: PostgresConnection, converted: Int64, isStopRequested: () -> Bool,
                          holds: (String) throws -> Void = { _ in }) throws -> (lags: [Lag], waited: Duration?)
    {
        var began: ContinuousClock.Instant?
        var lags = try measure(on: connection)
        while let worst = lags.filter({ $0.lag > ceiling.maximum }).max(by: { $0.lag < $1.lag }) {
            if isStopRequested() { throw BackfillError.stopped(converted: converted) }
            let now = clock.now
            if began == nil {
                began = now
                try holds("standby \(worst.name)'s replay lag \(ReplicationText.lag(worst.lag)) is over the ceiling of \(ReplicationText.lag(ceiling.maximum))")
            }
            if lastNotice.map({ now - $0 >= ceiling.noticeInterval }) ?? true {
                lastNotice = now
                log("backfill waits for standby \(worst.name): replay lag \(ReplicationText.lag(worst.lag)) (\(ReplicationText.bytes(worst.bytes))) is over the ceiling of \(ReplicationText.lag(ceiling.maximum))")
            }
            for (pid, standby) in replay where !ignored.contains(pid) && now - standby.since >= ceiling.stallLimit
                && lags.contains(where: { $0.name == standby.name && $0.lag > ceiling.maximum }) {
                ignored.insert(pid)
                log("standby \(standby.name) has replayed nothing for \(ReplicationText.lag(now - standby.since)) (stopped, paused or cut off?); backfill goes on without waiting for it until it replays again")
            }
            Thread.sleep(forTimeInterval: ceiling.pollInterval / .seconds(1))
            lags = try measure(on: connection)
        }
        return (lags, began.map { clock.now - $0 })
    }
}
