import Cutover
import CutoverPostgres
import Foundation
import PostgresClient

/// Text an application wrote (a reader's names) as the terminal may show it:
/// escaped, and cut after 255 characters.
private func escapedForTerminal(_ text: String) -> String {
    DisplayText.unquoted(text, limit: ReaderRegistry.maximumTextLength)
}

struct ReadersResult: CommandResult {
    /// The plan whose registrations these are.
    let plan: String
    let readers: [ReaderInstance]
    let standbys: StandbyOverview

    var text: String {
        let formatter = ISO8601DateFormatter()
        let registered = readers.isEmpty ? ["no reader registered with plan \(escapedForTerminal(plan))"] : readers.map {
            "\($0.state.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) \(escapedForTerminal($0.instanceID))  \(escapedForTerminal($0.applicationName)) \(escapedForTerminal($0.applicationVersion))  "
                + ($0.problem.map { "unreadable (\($0))" } ?? "reads \($0.formats.joined(separator: ","))")
                + "  last seen \(formatter.string(from: $0.lastSeenAt))" + silence($0)
        }
        // Without standbys the listing stays one line per reader, as scripts read it.
        let standbyLines = standbys.nodes.isEmpty && standbys.warnings.isEmpty ? [] : StandbyText.lines(standbys)
        return (registered + standbyLines).joined(separator: "\n")
    }


    /// How long a late or stale reader's heartbeats have been missing; nothing for a live one.
    private func silence(_ reader: ReaderInstance) -> String {
        guard reader.state != .live else { return "" }
        let seconds = max(0, reader.silentFor.components.seconds)
        return ", no heartbeat for \(seconds)s" + (reader.state == .late ? ": heartbeats are missing" : "")
    }

    var json: JSONResult {
        ["plan": .string(plan), "readers": readersJSON, "standbys": StandbyText.json(standbys)]
    }

    private var readersJSON: JSONResult {
        .array(readers.map {
            ["instanceID": .string($0.instanceID), "applicationName": .string($0.applicationName),
             "applicationVersion": .string($0.applicationVersion), "formats": .array($0.formats.map(JSONResult.string)),
             "live": .bool($0.isLive), "state": .string($0.state.rawValue), "lastSeenAt": .string(ISO8601DateFormatter().string(from: $0.lastSeenAt)),
             "problem": $0.problem.map(JSONResult.string) ?? .null]
        })
    }
}

struct ObserveResult: CommandResult {
    let report: ObservationReport
    let rollback: PhaseRunner.StepReport?
    let rollbackRefusal: String?

    private func line(_ rates: PathRates, _ label: String) -> String {
        "\(label): \(rates.saves) saves, \(rates.errors) failed (\(RollbackObservation.percent(rates.errorRate))), "
            + "\(rates.conflicts) conflicts (\(RollbackObservation.percent(rates.conflictRate)))"
    }

    var text: String {
        var lines = [line(report.modern, "modern, last \(DurationText.format(report.thresholds.window))"),
                     line(report.legacyBaseline, "legacy baseline")]
        if report.modern.saves < Int64(report.thresholds.minimumSaves) {
            lines.append("too few modern saves to judge (fewer than \(report.thresholds.minimumSaves))")
        }
        lines += report.crossed.map { "threshold crossed: \($0)" }
        if report.crossed.isEmpty { lines.append("no threshold crossed") }
        if let rollback {
            lines.append("switched back to legacy automatically (epoch \(rollback.epoch)); the history records why")
        } else if let rollbackRefusal {
            lines.append("no automatic rollback: \(rollbackRefusal)")
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        func rates(_ rates: PathRates) -> JSONResult {
            ["saves": .integer(rates.saves), "errors": .integer(rates.errors), "conflicts": .integer(rates.conflicts),
             "errorRate": .number(rates.errorRate), "conflictRate": .number(rates.conflictRate)]
        }
        return ["modern": rates(report.modern), "legacyBaseline": rates(report.legacyBaseline),
                "crossed": .array(report.crossed.map(JSONResult.string)), "rolledBack": .bool(rollback != nil),
                "rollbackRefusal": rollbackRefusal.map(JSONResult.string) ?? .null]
    }
}
