import Foundation
import PostgresClient

/// One standby as its upstream reports it in `pg_stat_replication`: the primary, or a standby
/// that a cascading standby streams from.
public struct StandbyReplication: Sendable, Equatable {
    /// The WAL sender's process ID on the upstream.
    public var pid: Int32
    /// The standby's `application_name`: its `primary_conninfo`'s, else its `cluster_name`,
    /// else `walreceiver`.
    public var applicationName: String
    /// The standby's address as the upstream sees it; `local` over a Unix socket.
    public var clientAddress: String
    /// `streaming`, `catchup`, `startup`, `backup` or `stopping`; nil when the role may not see
    /// it (it needs `pg_monitor` or `pg_read_all_stats`).
    public var state: String?
    /// `async`, `sync`, `potential` or `quorum`; nil when hidden.
    public var syncState: String?
    /// The last position the standby reported replayed; nil when hidden.
    public var replayPosition: WALPosition?
    /// Bytes of WAL the upstream has that the standby has not replayed; nil when hidden.
    public var lagBytes: Int64?
    /// PostgreSQL's replay lag: the time between the upstream flushing WAL and hearing it
    /// replayed. Stale or nil once the standby is caught up and idle, and stale while replay
    /// stands still, so it is never read alone (see ``StandbyLagMonitor``).
    public var replayLag: Duration?
    /// Seconds since the standby's last reply; nil when hidden.
    public var replyAge: Duration?
    /// Who reports it: `primary`, or the name of the standby it cascades from.
    public var upstream: String

    /// What an operator calls it: its application name and address.
    public var name: String { "\(applicationName) (\(clientAddress))" }

    /// Whether the role could see its replication state.
    public var isVisible: Bool { state != nil }

    /// Whether it receives WAL as a standby: not a base backup, which leaves when it is taken,
    /// nor a client that replays none (``replaysNothing``).
    public var isStandby: Bool { state != "backup" && !replaysNothing }

    /// Whether its client has replied and reports no replay position: it keeps the WAL and
    /// replays none, as `pg_receivewal` and the backup tools that stream WAL with it do, so it
    /// has no sessions, serves no reads and has no replay lag. A standby reports what it
    /// replayed from its first reply on; one that has not replied since it connected is still
    /// a standby.
    public var replaysNothing: Bool { isVisible && replyAge != nil && replayPosition == nil }

    /// Every WAL sender `connection`'s server runs, as seen from it, `upstream` naming that
    /// server; physical replication only (a logical slot's sender is not a standby).
    public static func list(upstream: String, on connection: PostgresConnection) throws -> [StandbyReplication] {
        try connection.query("""
            WITH here AS (
              SELECT CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
                          ELSE pg_current_wal_lsn() END AS lsn)
            SELECT r.pid, coalesce(r.application_name, '') AS application_name,
                   coalesce(host(r.client_addr), CASE WHEN r.client_port = -1 THEN 'local' ELSE 'unknown' END) AS client_address,
                   r.state, r.sync_state, r.replay_lsn::text AS replay_lsn,
                   pg_wal_lsn_diff(here.lsn, r.replay_lsn)::int8 AS lag_bytes,
                   extract(epoch FROM r.replay_lag)::float8 AS replay_lag,
                   extract(epoch FROM now() - r.reply_time)::float8 AS reply_age
              FROM pg_stat_replication r CROSS JOIN here
             WHERE r.pid NOT IN (SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)
             ORDER BY r.application_name, r.client_addr, r.pid
            """).map { row in
            StandbyReplication(
                pid: try row.decode(Int32.self, "pid"), applicationName: try row.decode(String.self, "application_name"),
                clientAddress: try row.decode(String.self, "client_address"), state: try row.decode(String?.self, "state"),
                syncState: try row.decode(String?.self, "sync_state"),
                replayPosition: try row.decode(String?.self, "replay_lsn").flatMap(WALPosition.init(text:)),
                lagBytes: try row.decode(Int64?.self, "lag_bytes").map { max(0, $0) },
                replayLag: try row.decode(Double?.self, "replay_lag").map(Duration.seconds(fractional:)),
                replyAge: try row.decode(Double?.self, "reply_age").map(Duration.seconds(fractional:)),
                upstream: upstream)
        }
    }
}

extension Duration {
    /// A duration of `seconds`, which may have a fraction; negative values count as zero.
    static func seconds(fractional seconds: Double) -> Duration {
        .milliseconds(Int64((max(0, seconds) * 1000).rounded()))
    }
}
