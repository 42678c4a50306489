import Foundation

/// Replication figures in words, as `phase` prints them.
public enum ReplicationText {
    /// A lag in words: `850ms`, `12.4s`, `3m5s`.
    public static func lag(_ duration: Duration) -> String {
        let milliseconds = Int64((duration / .milliseconds(1)).rounded())
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        if milliseconds < 60_000 { return String(format: "%.1fs", Double(milliseconds) / 1000) }
        return "\(milliseconds / 60_000)m\((milliseconds % 60_000) / 1000)s"
    }

    /// Bytes in words: `512 B`, `4.1 MB`.
    public static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// A standby's replay lag as its upstream reports it: `1.2s (4.1 MB)`, `0ms (caught up)`,
    /// or the bytes alone when PostgreSQL has no lag time to show; or why there is none to show.
    public static func replayLag(of row: StandbyReplication) -> String {
        guard row.isVisible else { return "hidden from this role (grant it pg_monitor)" }
        if row.replaysNothing { return "none: it replays no WAL (pg_receivewal, or a backup tool streaming WAL)" }
        guard let bytes = row.lagBytes, row.replayPosition != nil else { return "not reported yet: no reply since it connected" }
        if bytes == 0 { return "0ms (caught up)" }
        return (row.replayLag.map(lag) ?? "time not measured yet") + " (\(Self.bytes(bytes)))"
    }
}
