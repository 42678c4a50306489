/// Warnings about a standby's settings that make recovery conflicts likely while a step runs.
///
/// Replay on a standby conflicts with the standby's queries when it removes row versions they
/// can still see (the primary's vacuum after backfill's updates: a snapshot conflict) or needs a
/// lock they hold (the ACCESS EXCLUSIVE locks of expand's and contract's DDL: a lock conflict).
/// Replay then waits for the query up to `max_standby_streaming_delay` and cancels it:
/// `canceling statement due to conflict with recovery`. `hot_standby_feedback` tells the primary
/// which row versions the standby's queries see, so vacuum keeps them (snapshot conflicts go,
/// at the price of bloat on the primary while standby queries run); it does nothing for locks.
public enum StandbySettingsAdvice {
    /// The steps whose work conflicts with standby queries: `backfill` rewrites rows (snapshot
    /// conflicts after vacuum), `lock` takes ACCESS EXCLUSIVE locks (expand, contract).
    public enum Work: Sendable {
        /// Row rewrites, whose old versions vacuum removes.
        case rowRewrites
        /// DDL under ACCESS EXCLUSIVE locks.
        case exclusiveLocks
    }

    /// The warnings for one inspected standby before work of `kind`; empty when its settings
    /// make no cancellation likely.
    public static func warnings(for inspection: StandbyInspection, before work: Work) -> [String] {
        let delay = inspection.maxStandbyStreamingDelay
        var warnings: [String] = []
        switch work {
        case .rowRewrites where !inspection.hotStandbyFeedback:
            if delay == 0 {
                warnings.append("hot_standby_feedback is off and max_standby_streaming_delay is 0: every standby query that still sees a row version vacuum removes after backfill is cancelled at once; turn hot_standby_feedback on (the primary keeps those versions, some bloat) or give replay a delay")
            } else if delay > 0 {
                warnings.append("hot_standby_feedback is off and max_standby_streaming_delay is \(milliseconds(delay)): a standby query that still sees a row version vacuum removes after backfill is cancelled once replay has waited \(milliseconds(delay)), less the standby's lag at the time; turn hot_standby_feedback on (the primary keeps those versions, some bloat) or keep standby queries shorter")
            } else {
                warnings.append("hot_standby_feedback is off and max_standby_streaming_delay is -1: replay waits for conflicting standby queries forever, so none is cancelled but the standby falls behind while one runs, and backfill waits under its lag ceiling; turn hot_standby_feedback on to avoid the conflicts")
            }
        case .rowRewrites:
            break
        case .exclusiveLocks:
            if delay >= 0 {
                let when = delay == 0 ? "at once (max_standby_streaming_delay is 0)" : "once replay has waited \(milliseconds(delay)) (max_standby_streaming_delay)"
                warnings.append("the step's DDL takes ACCESS EXCLUSIVE locks, which replay on the standby takes too: a standby query on the table is cancelled \(when); hot_standby_feedback does not prevent lock conflicts; run the step when no long query reads the table on the standby")
            } else {
                warnings.append("the step's DDL takes ACCESS EXCLUSIVE locks, which replay on the standby takes too: with max_standby_streaming_delay -1 replay waits for every standby query on the table, so the standby stops replaying (and falls behind) until they end")
            }
        }
        return warnings
    }

    /// A standby's recovery conflicts in words: `snapshot 3, lock 0, buffer pin 0, deadlock 0, tablespace 0`.
    public static func conflicts(_ conflicts: StandbyInspection.Conflicts) -> String {
        "snapshot \(conflicts.snapshot), lock \(conflicts.lock), buffer pin \(conflicts.bufferPin), "
            + "deadlock \(conflicts.deadlock), tablespace \(conflicts.tablespace)"
    }

    /// Milliseconds in words, as PostgreSQL's settings show them: `0`, `250ms`, `30s`, `5min`.
    public static func milliseconds(_ value: Int64) -> String {
        if value < 0 { return "-1" }
        if value == 0 { return "0" }
        if value % 60_000 == 0 { return "\(value / 60_000)min" }
        if value % 1000 == 0 { return "\(value / 1000)s" }
        return "\(value)ms"
    }
}
