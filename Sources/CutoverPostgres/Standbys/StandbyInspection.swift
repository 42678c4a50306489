import Foundation
import PostgresClient

/// What a listed standby says about itself: who it is, what it replays from, and the settings
/// that decide how its queries and replay get along.
public struct StandbyInspection: Sendable, Equatable {
    /// Recovery conflicts counted on the standby for the plan's database, from
    /// `pg_stat_database_conflicts`: queries cancelled so that replay could go on.
    public struct Conflicts: Sendable, Equatable {
        /// Snapshot conflicts: replay removed row versions a query could still see (vacuum on the primary).
        public var snapshot: Int64
        /// Lock conflicts: replay needed a lock a query held (DDL on the primary: ACCESS EXCLUSIVE).
        public var lock: Int64
        /// Buffer-pin conflicts: replay needed a page a query had pinned.
        public var bufferPin: Int64
        /// Deadlocks with replay.
        public var deadlock: Int64
        /// Queries whose temporary files were in a tablespace replay dropped.
        public var tablespace: Int64

        /// Every conflict counted.
        public var total: Int64 { snapshot + lock + bufferPin + deadlock + tablespace }
    }

    /// Its address as the standby gives it (`host:port`), else the connection string without
    /// password.
    public var name: String
    /// The address the session reached it at (`inet_server_addr()`), nil over a Unix socket.
    public var serverAddress: String?
    /// Its system identifier from `pg_control_system()`; a standby of the primary has the
    /// primary's.
    public var systemIdentifier: String
    /// Whether it is in recovery, as a standby is; a promoted standby is not.
    public var isInRecovery: Bool
    /// The `application_name` its WAL receiver gives the upstream, which the upstream shows in
    /// `pg_stat_replication`: its `primary_conninfo`'s, else its `cluster_name`, else `walreceiver`.
    public var receiverApplicationName: String
    /// Whether ``receiverApplicationName`` was read from `primary_conninfo` rather than inferred
    /// (reading it needs `pg_read_all_stats`).
    public var isReceiverNameRead: Bool
    /// The host and port its WAL receiver streams from, when it streams.
    public var sender: String?
    /// The last position it replayed.
    public var replayPosition: WALPosition?
    /// Whether replay is paused (`pg_wal_replay_pause()`).
    public var isReplayPaused: Bool
    /// `hot_standby_feedback`.
    public var hotStandbyFeedback: Bool
    /// `max_standby_streaming_delay` in milliseconds; -1 waits for conflicting queries forever.
    public var maxStandbyStreamingDelay: Int64
    /// `max_standby_archive_delay` in milliseconds, for WAL replayed from the archive.
    public var maxStandbyArchiveDelay: Int64
    /// Its recovery conflicts so far in the plan's database.
    public var conflicts: Conflicts

    /// Reads what `connection`'s server says of itself; `database` is the plan's database,
    /// whose conflicts are counted.
    public static func inspect(_ connection: PostgresConnection, database: String, fallbackName: String) throws -> StandbyInspection {
        let row = try connection.query("""
            SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier,
                   pg_is_in_recovery() AS in_recovery,
                   host(inet_server_addr()) || ':' || inet_server_port() AS address, host(inet_server_addr()) AS server_addr,
                   current_setting('cluster_name') AS cluster_name,
                   current_setting('hot_standby_feedback')::bool AS feedback,
                   (SELECT setting::int8 FROM pg_settings WHERE name = 'max_standby_streaming_delay') AS streaming_delay,
                   (SELECT setting::int8 FROM pg_settings WHERE name = 'max_standby_archive_delay') AS archive_delay,
                   pg_last_wal_replay_lsn()::text AS replay_lsn,
                   CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS paused,
                   (SELECT conninfo FROM pg_stat_wal_receiver LIMIT 1) AS conninfo,
                   (SELECT sender_host || ':' || sender_port FROM pg_stat_wal_receiver LIMIT 1) AS sender,
                   c.confl_snapshot, c.confl_lock, c.confl_bufferpin, c.confl_deadlock, c.confl_tablespace
              FROM (SELECT 1) AS one
              LEFT JOIN pg_stat_database_conflicts c ON c.datname = \(database)
            """)[0]
        let conninfo = try row.decode(String?.self, "conninfo")
        let clusterName = try row.decode(String.self, "cluster_name")
        let readName = conninfo.flatMap { Self.keyword("application_name", in: $0) }
        return StandbyInspection(
            name: try row.decode(String?.self, "address") ?? fallbackName,
            serverAddress: try row.decode(String?.self, "server_addr"),
            systemIdentifier: try row.decode(String.self, "system_identifier"),
            isInRecovery: try row.decode(Bool.self, "in_recovery"),
            receiverApplicationName: readName ?? (clusterName.isEmpty ? "walreceiver" : clusterName),
            isReceiverNameRead: readName != nil || conninfo != nil,
            sender: try row.decode(String?.self, "sender"),
            replayPosition: try row.decode(String?.self, "replay_lsn").flatMap(WALPosition.init(text:)),
            isReplayPaused: try row.decode(Bool.self, "paused"),
            hotStandbyFeedback: try row.decode(Bool.self, "feedback"),
            maxStandbyStreamingDelay: try row.decode(Int64.self, "streaming_delay"),
            maxStandbyArchiveDelay: try row.decode(Int64.self, "archive_delay"),
            conflicts: Conflicts(snapshot: try row.decode(Int64?.self, "confl_snapshot") ?? 0,
                                 lock: try row.decode(Int64?.self, "confl_lock") ?? 0,
                                 bufferPin: try row.decode(Int64?.self, "confl_bufferpin") ?? 0,
                                 deadlock: try row.decode(Int64?.self, "confl_deadlock") ?? 0,
                                 tablespace: try row.decode(Int64?.self, "confl_tablespace") ?? 0))
    }

    /// The value of `keyword` in a libpq keyword/value string, as `pg_stat_wal_receiver` shows
    /// `primary_conninfo`: `keyword=value` or `keyword='quoted value'`.
    static func keyword(_ keyword: String, in conninfo: String) -> String? {
        var rest = Substring(conninfo)
        while let range = rest.range(of: keyword + "=") {
            let before = rest[..<range.lowerBound].last
            rest = rest[range.upperBound...]
            guard before == nil || before == " " else { continue }
            if rest.first == "'" {
                var value = ""
                var escaped = false
                for character in rest.dropFirst() {
                    if escaped { value.append(character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "'" { return value }
                    else { value.append(character) }
                }
                return value
            }
            return String(rest.prefix { $0 != " " })
        }
        return nil
    }
}
