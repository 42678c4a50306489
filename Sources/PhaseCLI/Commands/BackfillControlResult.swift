import CutoverPostgres

/// What `phase backfill --pause`, `--resume` or `--retune` asked, and whether a backfill runs
/// now to hear it.
struct BackfillControlResult: CommandResult {
    /// What the operator asked.
    enum Action: String {
        case pause, resume, retune
    }

    let action: Action
    let plan: String
    let control: BackfillControl
    /// The runner working on the plan now, nil when none is.
    let runner: String?

    var text: String {
        let heard = runner.map { "the backfill running (\($0)) hears it before its next batch" }
            ?? "no backfill runs now: the next one hears it before its first batch"
        let line: String
        switch action {
        case .pause:
            line = "backfill of plan \(plan) paused by \(control.changedBy): \(heard); 'phase backfill --resume' lets it go on"
        case .resume:
            line = "backfill of plan \(plan) resumed by \(control.changedBy): \(heard)"
        case .retune:
            line = "backfill of plan \(plan) retuned by \(control.changedBy) (\(control.retuneText)): \(heard); it lasts until the backfill finishes"
        }
        return line + "\n"
    }

    var json: JSONResult {
        ["plan": .string(plan), "action": .string(action.rawValue), "paused": .bool(control.isPaused),
         "retune": control.retuneText.isEmpty ? .null : .string(control.retuneText), "changedBy": .string(control.changedBy),
         "changedAt": .string(control.changedAt), "runner": runner.map { .string($0) } ?? .null]
    }
}
