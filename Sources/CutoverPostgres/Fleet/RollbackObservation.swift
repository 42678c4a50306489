import Cutover
import Foundation
import PostgresClient

/// When to switch back to the legacy writer: thresholds on the modern path's outcome rates.
public struct ObservationThresholds: Sendable, Equatable {
    /// The span of recent outcomes judged.
    public var window: Duration
    /// The modern path's highest acceptable share of failed saves (outcomes `error` and
    /// `outcomeUnknown`), from 0 to 1.
    public var maximumErrorRate: Double
    /// The modern path's highest acceptable conflict rate, as a multiple of the legacy path's
    /// before the switch (a baseline under 1% counts as 1%).
    public var maximumConflictRatio: Double
    /// Fewer modern saves than this in the window are too few to judge.
    public var minimumSaves: Int

    /// 5 minutes, 1% errors, twice the legacy conflict rate, at least 20 saves.
    public init(window: Duration = .seconds(300), maximumErrorRate: Double = 0.01,
                maximumConflictRatio: Double = 2, minimumSaves: Int = 20) {
        self.window = window
        self.maximumErrorRate = maximumErrorRate
        self.maximumConflictRatio = maximumConflictRatio
        self.minimumSaves = minimumSaves
    }
}

/// Outcome counts of one writer path over a span of time.
public struct PathRates: Sendable, Equatable {
    /// The path.
    public var path: SavePath
    /// Saves counted, of every outcome.
    public var saves: Int64
    /// Saves that failed (`error`, `outcomeUnknown`).
    public var errors: Int64
    /// Saves refused as revision conflicts.
    public var conflicts: Int64
    /// Counts per outcome code.
    public var byOutcome: [String: Int64]

    /// errors / saves, 0 with no saves.
    public var errorRate: Double { saves == 0 ? 0 : Double(errors) / Double(saves) }
    /// conflicts / saves, 0 with no saves.
    public var conflictRate: Double { saves == 0 ? 0 : Double(conflicts) / Double(saves) }
}

/// What the outcome log says about the modern writer, against the thresholds.
public struct ObservationReport: Sendable, Equatable {
    /// The modern path over the window.
    public var modern: PathRates
    /// The legacy path over the window before the switch (or the same window, before any switch).
    public var legacyBaseline: PathRates
    /// The thresholds judged against.
    public var thresholds: ObservationThresholds
    /// Each threshold crossed, in words; empty when none is.
    public var crossed: [String]

    /// Whether any threshold is crossed.
    public var isCrossed: Bool { !crossed.isEmpty }
}

/// Reads a plan's per-path outcome rates from `cutover.outcome_log` and judges them.
///
/// The log holds what the application instances report of their own saves, through
/// `cutover.record_outcomes`: known codes and bounded counts only, in the server's minute. An
/// application can still report failures that did not happen; judging by the log trusts that
/// telemetry, and the switch it can bring about is the one back to legacy.
public enum RollbackObservation {
    /// The modern path's rates over the window and the legacy baseline, judged.
    public static func observe(plan: String, thresholds: ObservationThresholds,
                               on connection: PostgresConnection) throws -> ObservationReport {
        let seconds = Double(thresholds.window.components.seconds)
        let switched = try connection.query("""
            SELECT CASE WHEN writer_path = 'modern' THEN writer_switched_at END AS switched_at FROM cutover.migration_state WHERE plan = \(plan)
            """).first?.decode(Date?.self, "switched_at")
        let modern = try rates(.modern, plan: plan, seconds: seconds, before: nil, on: connection)
        let legacy = try rates(.legacy, plan: plan, seconds: seconds, before: switched, on: connection)
        var crossed: [String] = []
        if modern.saves >= Int64(thresholds.minimumSaves) {
            if modern.errorRate > thresholds.maximumErrorRate {
                crossed.append("modern error rate \(percent(modern.errorRate)) is above \(percent(thresholds.maximumErrorRate))"
                               + " (\(modern.errors) of \(modern.saves) saves)")
            }
            let baseline = max(legacy.conflictRate, 0.01)
            if modern.conflictRate > thresholds.maximumConflictRatio * baseline {
                crossed.append("modern conflict rate \(percent(modern.conflictRate)) is above "
                               + "\(String(format: "%.1f", thresholds.maximumConflictRatio))x the legacy baseline \(percent(legacy.conflictRate))")
            }
        }
        return ObservationReport(modern: modern, legacyBaseline: legacy, thresholds: thresholds, crossed: crossed)
    }

    /// A path's counts over the last `seconds`, or over the `seconds` before `before`.
    ///
    /// Applications write the log, so its counts are data to judge, never trusted to fit: they
    /// are summed as numeric and each sum stops at `Int64.max`; rows of minutes still to come
    /// are not counted.
    private static func rates(_ path: SavePath, plan: String, seconds: Double, before switchedAt: Date?,
                              on connection: PostgresConnection) throws -> PathRates {
        // Minutes are whole in the log: a minute counts when it began inside the span.
        let rows = try connection.query("""
            SELECT left(outcome, 64) AS outcome, least(sum(count::numeric), 9223372036854775807)::bigint AS n
              FROM cutover.outcome_log
             WHERE plan = \(plan) AND path = \(path.rawValue)
               AND minute >= date_trunc('minute', coalesce(\(switchedAt)::timestamptz, now()) - make_interval(secs => \(seconds)))
               AND minute <= least(coalesce(\(switchedAt)::timestamptz, now()), now())
             GROUP BY 1
            """)
        var counts: [String: Int64] = [:]
        for row in rows {
            let outcome = try row.decode(String.self, "outcome")
            counts[outcome] = OutcomeRecorder.saturatingSum(counts[outcome] ?? 0, max(0, try row.decode(Int64.self, "n")))
        }
        let failed = [OutcomeRecorder.errorCode, SaveOutcome.outcomeUnknown.code].map { counts[$0] ?? 0 }
        return PathRates(path: path, saves: counts.values.reduce(0, OutcomeRecorder.saturatingSum),
                         errors: failed.reduce(0, OutcomeRecorder.saturatingSum),
                         conflicts: counts[SaveOutcome.conflict.code] ?? 0, byOutcome: counts)
    }

    /// A rate as a percentage with one decimal: `1.5%`.
    public static func percent(_ rate: Double) -> String { String(format: "%.1f%%", rate * 100) }
}
