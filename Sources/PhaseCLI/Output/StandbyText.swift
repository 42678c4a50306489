import Cutover
import CutoverPostgres
import Foundation

/// The standbys of `status`, `check` and `readers`, as text lines and JSON.
///
/// Application names and addresses come from the servers, which applications can influence
/// (`application_name`), so text shows them escaped.
enum StandbyText {
    /// `standbys:` and a line per standby, then a `warning:` line per warning.
    static func lines(_ overview: StandbyOverview) -> [String] {
        guard !overview.nodes.isEmpty else { return ["standbys: none reported by the primary or listed"] + warnings(overview) }
        return ["standbys:"] + overview.nodes.map { "  " + DisplayText.unquoted(line($0), limit: 2000) } + warnings(overview)
    }

    private static func warnings(_ overview: StandbyOverview) -> [String] {
        overview.warnings.map { "warning: " + DisplayText.unquoted($0, limit: 2000) }
    }

    private static func line(_ node: StandbyNode) -> String {
        var parts: [String] = []
        if let row = node.reported {
            parts.append("\(row.name), reported by the \(row.upstream == "primary" ? "primary" : "standby \(row.upstream)"): "
                         + "\(row.state ?? "state hidden"), replay lag \(ReplicationText.replayLag(of: row))")
        }
        if let inspection = node.inspection {
            var listed = "listed as \(inspection.name)"
            if let note = node.matchNote { listed += ", \(note)" }
            if inspection.isReplayPaused { listed += ", replay paused" }
            parts.append(listed)
            parts.append("hot_standby_feedback \(inspection.hotStandbyFeedback ? "on" : "off"), "
                         + "max_standby_streaming_delay \(StandbySettingsAdvice.milliseconds(inspection.maxStandbyStreamingDelay))")
            parts.append("recovery conflicts: " + StandbySettingsAdvice.conflicts(inspection.conflicts))
        }
        if let problem = node.problem {
            parts.append((node.reported == nil && node.inspection == nil ? "\(node.name) " : "") + problem
                         + (node.isAllowedUninspected ? " (allowed uninspected)" : ""))
        }
        return parts.joined(separator: "; ")
    }

    /// An array with an object per standby.
    static func json(_ overview: StandbyOverview) -> JSONResult {
        .array(overview.nodes.map { node in
            var object: [String: JSONResult] = [
                "name": .string(node.name), "inspected": .bool(node.isInspected),
                "problem": node.problem.map(JSONResult.string) ?? .null,
                "allowedUninspected": .bool(node.isAllowedUninspected),
                "match": node.matchNote.map(JSONResult.string) ?? .null,
            ]
            if let row = node.reported {
                object["applicationName"] = .string(row.applicationName)
                object["clientAddress"] = .string(row.clientAddress)
                object["upstream"] = .string(row.upstream)
                object["state"] = row.state.map(JSONResult.string) ?? .null
                object["syncState"] = row.syncState.map(JSONResult.string) ?? .null
                object["replayLagSeconds"] = row.lagBytes == 0 ? .number(0) : row.replayLag.map { .number($0 / .seconds(1)) } ?? .null
                object["replayLagBytes"] = row.lagBytes.map(JSONResult.integer) ?? .null
                object["replayPosition"] = row.replayPosition.map { .string($0.description) } ?? .null
            } else {
                object["state"] = .null
            }
            if let inspection = node.inspection {
                object["listedAs"] = .string(inspection.name)
                object["inRecovery"] = .bool(inspection.isInRecovery)
                object["replayPaused"] = .bool(inspection.isReplayPaused)
                object["hotStandbyFeedback"] = .bool(inspection.hotStandbyFeedback)
                object["maxStandbyStreamingDelayMs"] = .integer(inspection.maxStandbyStreamingDelay)
                let conflicts = inspection.conflicts
                object["conflicts"] = ["snapshot": .integer(conflicts.snapshot), "lock": .integer(conflicts.lock),
                                       "bufferPin": .integer(conflicts.bufferPin), "deadlock": .integer(conflicts.deadlock),
                                       "tablespace": .integer(conflicts.tablespace)]
            }
            return .object(object)
        })
    }
}
