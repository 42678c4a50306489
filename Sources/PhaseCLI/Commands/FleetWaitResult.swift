import Cutover
import CutoverPostgres

/// What `phase switch --wait-for-fleet` did: the switch, then how far the fleet followed it.
struct FleetWaitResult: CommandResult {
    let step: StepResult
    let catchUp: FleetCatchUp

    /// One line on the fleet: who follows, who is behind, who went silent.
    static func summary(_ catchUp: FleetCatchUp) -> String {
        var line = "fleet: \(catchUp.following.count) of \(catchUp.following.count + catchUp.behind.count) live instances follow epoch \(catchUp.epoch)"
        if !catchUp.behind.isEmpty { line += "; behind: " + listed(catchUp.behind) }
        if !catchUp.gone.isEmpty { line += "; gone (stopped heartbeating, not waited for): " + listed(catchUp.gone) }
        return line
    }

    /// Members for a line, escaped: instance IDs are what applications wrote.
    private static func listed(_ members: [FleetMember]) -> String {
        members.map { DisplayText.unquoted($0.description, limit: 300) }.joined(separator: ", ")
    }

    var text: String { step.text + "\n" + Self.summary(catchUp) }

    var json: JSONResult {
        func members(_ members: [FleetMember]) -> JSONResult {
            .array(members.map { ["instanceID": .string($0.instanceID), "epoch": $0.epoch.map(JSONResult.integer) ?? .null] })
        }
        guard case .object(var object) = step.json else { return step.json }
        object["fleet"] = ["epoch": .integer(catchUp.epoch), "caughtUp": .bool(catchUp.isComplete),
                           "following": members(catchUp.following), "behind": members(catchUp.behind),
                           "gone": members(catchUp.gone)]
        return .object(object)
    }
}
