import CommandLineKit
import Cutover
import CutoverPostgres
import Foundation

/// JSON for one check.
private func checkJSON(_ check: CheckOutcome) -> JSONResult {
    ["name": .string(check.name), "ok": .bool(check.isPassed), "observed": .string(check.observed),
     "expected": .string(check.expected), "message": .string(check.message)]
}

/// Lines for checks: `  ok      name: expected …, observed …`. The observed value may quote
/// what applications wrote (reader names), so it is escaped.
private func lines(_ checks: [CheckOutcome]) -> [String] {
    checks.map { "  \($0.isPassed ? "ok    " : "FAILED") \($0.name): expected \($0.expected), observed \(DisplayText.unquoted($0.observed, limit: 2000))"
        + ($0.isPassed || $0.message.isEmpty ? "" : " (\($0.message))") }
}

struct InitResult: CommandResult {
    let plan: String
    let schema: ControlSchema.InstallOutcome?
    let schemaVersionBefore: Int?
    let createdState: Bool
    let isDryRun: Bool

    var text: String {
        var lines: [String] = []
        let target = ControlSchema.version
        switch (isDryRun, schema) {
        case (true, _):
            if schemaVersionBefore == target {
                lines.append("control schema: version \(target), current; nothing to do")
            } else {
                lines.append("control schema: would \(schemaVersionBefore == nil ? "install" : "upgrade") version \(target)"
                             + (schemaVersionBefore.map { " (from \($0))" } ?? ""))
            }
            lines.append(createdState ? "plan \(plan): would start tracking at baseline" : "plan \(plan): tracked already")
            lines.append("dry run: nothing was changed")
        case (false, .current?):
            lines.append("control schema: version \(target), current")
        case (false, .installed(let from)?):
            lines.append("control schema: \(from == nil ? "installed" : "upgraded from version \(from!) to") version \(target)")
        case (false, nil):
            break
        }
        if !isDryRun { lines.append(createdState ? "plan \(plan): tracking started at baseline" : "plan \(plan): tracked already") }
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        ["plan": .string(plan), "controlSchemaVersion": .integer(Int64(ControlSchema.version)),
         "previousVersion": schemaVersionBefore.map { .integer(Int64($0)) } ?? .null,
         "createdState": .bool(createdState), "dryRun": .bool(isDryRun)]
    }
}

struct StepResult: CommandResult {
    let report: PhaseRunner.StepReport

    init(_ report: PhaseRunner.StepReport) { self.report = report }

    var text: String {
        guard !report.isAlreadyDone else {
            let by = report.doneBy.map {
                " (epoch \($0.epoch.map(String.init) ?? "?"), by role \($0.databaseRole), OS user \($0.osUser), "
                    + "at \(ISO8601DateFormatter().string(from: $0.startedAt)))"
            } ?? ""
            return "\(report.step) already done\(by); nothing changed: phase \(report.to), epoch \(report.epoch), "
                + "writer \(report.to.writerPath)"
        }
        var text = "\(report.step) done: \(report.from) -> \(report.to) (epoch \(report.epoch), writer \(report.to.writerPath))"
        if report.resumedInterrupted { text += "\nan interrupted earlier attempt was taken over and finished" }
        return text
    }

    var json: JSONResult {
        ["step": .string(report.step), "from": .string(report.from.rawValue), "to": .string(report.to.rawValue),
         "epoch": .integer(report.epoch), "writerPath": .string(report.to.writerPath.rawValue),
         "alreadyDone": .bool(report.isAlreadyDone), "doneAtEpoch": report.doneBy?.epoch.map(JSONResult.integer) ?? .null,
         "checks": .array(report.checks.map(checkJSON)), "resumedInterrupted": .bool(report.resumedInterrupted)]
    }
}

struct DryRunResult: CommandResult {
    let step: String
    let phase: MigrationPhase
    let refusal: String?
    let isAlreadyDone: Bool
    let checks: [CheckOutcome]
    let files: [(path: String, inTransaction: Bool, sql: String)]

    var text: String {
        var out = ["dry run of \(step) from phase \(phase): nothing will be changed"]
        if isAlreadyDone { out.append("already done: running it would change nothing") }
        if let refusal { out.append("refused: \(refusal)") }
        if !checks.isEmpty { out.append("checks:"); out += lines(checks) }
        for file in files {
            out.append("--- \(file.path) (\(file.inTransaction ? "in a transaction" : "outside a transaction"); locks: \(LockSummary.describe(file.sql)))")
            out.append(file.sql.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return out.joined(separator: "\n")
    }

    var json: JSONResult {
        ["step": .string(step), "phase": .string(phase.rawValue), "refusal": refusal.map(JSONResult.string) ?? .null,
         "alreadyDone": .bool(isAlreadyDone),
         "checks": .array(checks.map(checkJSON)),
         "files": .array(files.map { ["path": .string($0.path), "transaction": .bool($0.inTransaction),
                                      "locks": .string(LockSummary.describe($0.sql)), "sql": .string($0.sql)] }),
         "dryRun": true]
    }
}

struct StatusResult: CommandResult {
    let status: PhaseStatus
    let standbys: StandbyOverview

    init(_ status: PhaseStatus, standbys: StandbyOverview) {
        self.status = status
        self.standbys = standbys
    }

    var text: String {
        let state = status.state
        var out = ["plan \(status.plan) (\(status.location))",
                   "phase \(state.phase), writer \(state.writerPath), epoch \(state.epoch)"]
        out.append("steps:")
        out += status.steps.map { "  \($0.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.state)" }
        switch state.phase {
        case .baseline:
            out.append("backfill: not before expand, which adds the representation it fills")
        case .contracted:
            out.append("backfill: \(status.backfill.done) rows converted; the legacy representation is gone")
        default:
            if let notCounted = status.remainingNotCounted {
                out.append("backfill: \(status.backfill.done) rows converted; the rows still to convert \(notCounted)")
                break
            }
            let left = status.backfill.total - status.backfill.done
            let byApplication = status.backfill.byApplication
            out.append("backfill: \(status.backfill.done) of \(status.backfill.total) rows converted"
                       + (left > 0 ? ", \(left) still to convert" : ", none left to convert")
                       + (byApplication > 0 ? "; \(byApplication) more converted by the application's own writes since it began" : ""))
        }
        if let rehearsal = status.lastRehearsal {
            out.append("last rehearsal: \(rehearsal.id), started \(rehearsal.startedAt) by \(rehearsal.osUser), "
                       + "\(rehearsal.verdict ?? "running"), checksum \(rehearsal.checksum.prefix(12))")
        } else {
            out.append("last rehearsal: none (phase rehearse runs one)")
        }
        out += StandbyText.lines(standbys)
        for attempt in status.unfinished {
            out.append("\(status.lockHolder == nil ? "interrupted" : "running"): \(attempt.step), started \(attempt.startedAt) by \(attempt.osUser)"
                       + (status.lockHolder == nil ? "; run it again to finish it" : ""))
        }
        if let holder = status.lockHolder { out.append("runner at work: \(holder)") }
        if let run = status.backfillRun {
            out.append(Self.backfillRunLine(run, isRunning: status.lockHolder != nil))
            if status.lockHolder != nil, let held = Self.heldLine(run) { out.append(held) }
        }
        if let control = status.backfillControl {
            if control.isPaused {
                out.append("backfill paused by \(control.changedBy) at \(control.changedAt): 'phase backfill --resume' lets it go on")
            }
            if !control.retuneText.isEmpty { out.append("backfill retuned by \(control.changedBy): \(control.retuneText)") }
        }
        if let halfDone = status.halfDone {
            out.append("half done: \(halfDone.stopped) stopped after applying \(Self.files(halfDone)); "
                       + "run '\(halfDone.stopped)' again to finish it, or '\(Self.command(for: halfDone.step, epoch: state.epoch))' to undo it")
        }
        if let undo = Self.rollbackCommand(status) { out.append("to roll back: \(undo)") }
        if let next = status.nextStep {
            out.append("next: \(next.name)")
            out += lines(status.nextChecks)
        } else {
            out.append("next: nothing; the migration is complete")
        }
        return out.joined(separator: "\n")
    }

    /// `backfill running: 1000 of 2500 rows converted (1000 in this run), 800 rows/s, ETA 2s; …`.
    static func backfillRunLine(_ run: BackfillRunReport, isRunning: Bool) -> String {
        var line = "backfill \(isRunning ? "running" : "stopped"): \(BackfillRunReport.rowsConverted(run.converted, of: run.total))"
            + " (\(run.convertedThisRun) in this run"
            + ((run.convertedByApplication ?? 0) > 0 ? ", \(run.convertedByApplication ?? 0) more by the application's writes" : "")
            + "), \(run.rowsPerSecond) rows/s"
            + ((run.workers ?? 1) > 1 ? " on \(run.workers ?? 1) workers" : "")
            + (run.total == nil ? ", the rows still to convert not counted yet" : "")
        if isRunning, let left = run.secondsLeft { line += ", ETA \(DurationText.format(.seconds(left)))" }
        return line + "; " + pace(run, withThrottleReason: true) + (run.batches > 0 ? "; last batch at \(run.updatedAt)" : "; no batch yet")
    }

    /// `backfill held since …: the throttle query answered true; it goes on when that is no longer so`,
    /// nil while nothing holds it.
    static func heldLine(_ run: BackfillRunReport) -> String? {
        run.holdReason.map { "backfill held" + (run.heldSince.map { " since \($0)" } ?? "") + ": \($0); it goes on when that is no longer so" }
    }

    /// `batches of 1000 rows (target 50ms), nice ratio 0.25; throttled 0s, paused 0s, waited for standbys 0s`.
    static func pace(_ run: BackfillRunReport, withThrottleReason: Bool) -> String {
        let milliseconds = { (value: Int64) in DurationText.format(.milliseconds(value)) }
        return "batches of \(run.batchSize) rows"
            + (run.targetBatchMs > 0 ? " (target \(milliseconds(run.targetBatchMs)))" : " (fixed)")
            + ", nice ratio \(ValueType.decimal(in: PlanLimits.niceRatio).format(run.niceRatio))"
            + "; throttled \(milliseconds(run.throttledMs))"
            + (withThrottleReason ? run.lastThrottleReason.map { " (last: \($0))" } ?? "" : "")
            + ", paused \(milliseconds(run.pausedMs)), waited for standbys \(milliseconds(run.replicaWaitedMs))"
    }

    static func backfillRunJSON(_ run: BackfillRunReport) -> JSONResult {
        ["converted": .integer(run.converted), "convertedThisRun": .integer(run.convertedThisRun), "total": run.total.map { .integer($0) } ?? .null,
         "convertedByApplication": run.convertedByApplication.map { .integer($0) } ?? .null,
         "workers": .integer(Int64(run.workers ?? 1)),
         "rowsPerSecond": .integer(run.rowsPerSecond), "secondsLeft": run.secondsLeft.map { .integer($0) } ?? .null,
         "batches": .integer(Int64(run.batches)), "batchSize": .integer(Int64(run.batchSize)), "targetBatchMs": .integer(run.targetBatchMs),
         "niceRatio": .number(run.niceRatio), "throttledMs": .integer(run.throttledMs), "pausedMs": .integer(run.pausedMs),
         "replicaWaitedMs": .integer(run.replicaWaitedMs), "lastThrottleReason": run.lastThrottleReason.map { .string($0) } ?? .null,
         "holdReason": run.holdReason.map { .string($0) } ?? .null, "heldSince": run.heldSince.map { .string($0) } ?? .null,
         "updatedAt": .string(run.updatedAt)]
    }

    var json: JSONResult {
        let state = status.state
        return [
            "plan": .string(status.plan), "phase": .string(state.phase.rawValue), "writerPath": .string(state.writerPath.rawValue),
            "epoch": .integer(state.epoch),
            "steps": .array(status.steps.map { ["name": .string($0.name), "state": .string($0.state.rawValue)] }),
            "nextStep": status.nextStep.map { .string($0.name) } ?? .null,
            "nextChecks": .array(status.nextChecks.map(checkJSON)),
            "backfill": status.remainingNotCounted.map { ["done": .integer(status.backfill.done), "total": .null,
                                                          "convertedByApplication": .null, "notCounted": .string($0)] }
                ?? ["done": .integer(status.backfill.done), "total": .integer(status.backfill.total),
                    "convertedByApplication": .integer(status.backfill.byApplication)],
            "interrupted": .array(status.lockHolder == nil ? status.unfinished.map { .string($0.step) } : []),
            "runner": status.lockHolder.map { .string($0.description) } ?? .null,
            "backfillRun": status.backfillRun.map(Self.backfillRunJSON) ?? .null,
            "backfillPaused": .bool(status.backfillControl?.isPaused ?? false),
            "backfillRetune": status.backfillControl.map { $0.retuneText.isEmpty ? .null : .string($0.retuneText) } ?? .null,
            "lastRehearsal": status.lastRehearsal.map { ["id": .integer($0.id), "startedAt": .string($0.startedAt),
                                                         "verdict": $0.verdict.map(JSONResult.string) ?? .null,
                                                         "checksum": .string($0.checksum), "osUser": .string($0.osUser)] } ?? .null,
            "halfDone": status.halfDone.map { ["step": .string($0.stopped.name), "undo": .string($0.step.name),
                                               "appliedFiles": .array($0.appliedFiles.map(JSONResult.string))] } ?? .null,
            "rollbackCommand": Self.rollbackCommand(status).map(JSONResult.string) ?? .null,
            "standbys": StandbyText.json(standbys), "standbyWarnings": .array(standbys.warnings.map(JSONResult.string)),
        ]
    }

    private static func files(_ halfDone: PhaseRunner.HalfDoneStep) -> String {
        halfDone.appliedFiles.isEmpty ? "none of its files" : halfDone.appliedFiles.joined(separator: ", ")
    }

    /// The `phase rollback` command that undoes the current phase, bound to its epoch.
    private static func rollbackCommand(_ status: PhaseStatus) -> String? {
        let step = status.halfDone?.step ?? (try? PhaseMachine.rollbackStep(from: status.state.phase))
        return step.map { command(for: $0, epoch: status.state.epoch) }
    }

    private static func command(for step: PhaseStep, epoch: Int64) -> String {
        "phase \(RollbackCommand.words(undoing: step)) --epoch \(epoch)"
    }
}

struct ChecksResult: CommandResult {
    let step: String
    let phase: MigrationPhase
    let checks: [CheckOutcome]
    let refusal: String?
    /// The standbys, and the warnings for the step; nil when no step was checked.
    let standbys: StandbyOverview?

    var text: String {
        var out = ["checks before \(step) (phase \(phase)):"]
        if let refusal { out.append("  refused: \(refusal)") }
        out += lines(checks)
        if let standbys { out += StandbyText.lines(standbys) }
        let failed = checks.filter { !$0.isPassed }.count
        if refusal != nil {
            out.append("the step cannot run from this phase")
        } else {
            out.append(failed == 0 ? "all checks pass" : "\(failed) check\(failed == 1 ? "" : "s") failed")
        }
        return out.joined(separator: "\n")
    }

    var json: JSONResult {
        ["step": .string(step), "phase": .string(phase.rawValue), "refusal": refusal.map(JSONResult.string) ?? .null,
         "checks": .array(checks.map(checkJSON)), "ok": .bool(refusal == nil && checks.allSatisfy(\.isPassed)),
         "standbys": standbys.map(StandbyText.json) ?? .array([]),
         "warnings": .array((standbys?.warnings ?? []).map(JSONResult.string))]
    }
}

struct HistoryResult: CommandResult {
    let entries: [PhaseHistoryEntry]

    var text: String {
        guard !entries.isEmpty else { return "no step attempted yet" }
        let formatter = ISO8601DateFormatter()
        return entries.map { entry in
            var line = "\(entry.id)  \(formatter.string(from: entry.startedAt))  \(entry.step) (\(entry.direction))  \(entry.outcome)"
            if let duration = entry.durationMilliseconds { line += "  \(duration)ms" }
            if let epoch = entry.epoch { line += "  epoch \(epoch)" }
            line += "  by \(entry.osUser) as \(entry.databaseRole)"
            if let error = entry.error { line += "\n      \(error)" }
            if let rehearsal = entry.rehearsal { line += "\n      rehearsal: \(rehearsal)" }
            if let run = BackfillRunReport.from(details: entry.details) { line += "\n      " + Self.paceText(run) }
            return line
        }.joined(separator: "\n")
    }

    var json: JSONResult {
        .array(entries.map { entry in
            ["id": .integer(entry.id), "step": .string(entry.step), "direction": .string(entry.direction.rawValue),
             "outcome": .string(entry.outcome.rawValue), "startedAt": .string(ISO8601DateFormatter().string(from: entry.startedAt)),
             "durationMs": entry.durationMilliseconds.map(JSONResult.integer) ?? .null,
             "error": entry.error.map(JSONResult.string) ?? .null, "checksum": entry.checksum.map(JSONResult.string) ?? .null,
             "epoch": entry.epoch.map(JSONResult.integer) ?? .null, "databaseRole": .string(entry.databaseRole),
             "osUser": .string(entry.osUser), "rehearsal": entry.rehearsal.map(JSONResult.string) ?? .null,
             "backfill": BackfillRunReport.from(details: entry.details).map(StatusResult.backfillRunJSON) ?? .null]
        })
    }

    /// `pace: 12 batches, 1500 rows converted in this run at 900 rows/s; batches of … rows …`.
    static func paceText(_ run: BackfillRunReport) -> String {
        "pace: \(run.batches) batches, \(run.convertedThisRun) rows converted in this run at \(run.rowsPerSecond) rows/s"
            + ((run.workers ?? 1) > 1 ? " on \(run.workers ?? 1) workers" : "") + "; "
            + StatusResult.pace(run, withThrottleReason: false)
    }
}

struct PruneResult: CommandResult {
    /// The plan whose rows were pruned; nil for every plan's (`--all-plans`).
    let plan: String?
    let deleted: Int64
    let batches: Int
    let isComplete: Bool
    let isDryRun: Bool

    private var whose: String { plan.map { "of plan \(DisplayText.quoted($0)) " } ?? "of every plan " }

    var text: String {
        if isDryRun { return "dry run: \(deleted) ledger rows \(whose)are past the retention and would be pruned; nothing was changed" }
        return "pruned \(deleted) ledger row\(deleted == 1 ? "" : "s") \(whose)in \(batches) batch\(batches == 1 ? "" : "es")"
            + (isComplete ? "" : "; some were busy, run it again")
    }

    var json: JSONResult {
        ["plan": plan.map(JSONResult.string) ?? .null, "deleted": .integer(deleted), "batches": .integer(Int64(batches)),
         "complete": .bool(isComplete), "dryRun": .bool(isDryRun)]
    }
}
