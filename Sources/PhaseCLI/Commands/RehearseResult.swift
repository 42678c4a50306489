import Cutover
import CutoverPostgres

/// `phase rehearse`'s result: each step's statements with what they did on the copy and would
/// cost on the real table, the replays, the findings most serious first, and the verdict.
struct RehearseResult: CommandResult {
    let report: Rehearsal.Report

    private var scale: RehearsalAnalysis.Scale { report.scale }

    var text: String {
        var lines = ["rehearsal \(report.id) of plan \(report.plan) on a copy of \(report.table): \(count(scale.sampleRows)) of about "
                     + "\(count(scale.tableRows)) rows (\(ReplicationText.bytes(scale.tableBytes))), in scratch database \(report.scratchDatabase), now removed",
                     "steps: \(report.steps.joined(separator: ", "))"]
        var step = ""
        var file: String?? = .none
        var held: (transaction: Int, mode: LockMode)?
        for (observation, estimate) in zip(report.observations, report.estimates) {
            if held?.transaction != observation.transaction || !observation.isInTransaction { held = nil }
            if observation.step != step {
                step = observation.step
                file = .none
                lines.append("\(step):")
            }
            if file != .some(observation.file) {
                file = .some(observation.file)
                if let path = observation.file {
                    lines.append("  \(path) (\(observation.isInTransaction ? "in a transaction" : "outside a transaction"))")
                }
            }
            lines.append("    \(DisplayText.unquoted(oneLine(observation.statement), limit: 100))")
            lines.append("      " + describe(observation, estimate, heldBefore: held?.mode))
            if observation.isInTransaction, let mode = observation.lock(on: report.table) {
                held = (observation.transaction, max(held?.mode ?? mode, mode))
            }
        }
        let replayed = report.replays.filter { $0.kind != .skipped }
        if report.statements.isEmpty {
            lines.append("no application statement replayed")
        } else {
            let kinds = report.statements.first?.isBuiltIn == true ? "built-in statements" : "the plan's statements"
            let failed = replayed.filter { $0.kind != .worked }.count
            lines.append("replayed \(report.statements.count) \(kinds) at \(Set(report.replays.map(\.stage)).count) points: "
                         + "\(replayed.count - failed) worked, \(failed) failed or disagreed")
        }
        for note in report.notes { lines.append("note: \(note)") }
        if report.findings.isEmpty {
            lines.append("findings: none")
        } else {
            lines.append("findings:")
            for finding in report.findings {
                let label = finding.severity == .failure ? "FAILURE" : finding.severity.rawValue
                lines.append("  \(label) (\(finding.step)): \(finding.message)")
                if let statement = finding.statement {
                    lines.append("    in: \(DisplayText.unquoted(oneLine(statement), limit: 100))")
                }
            }
        }
        lines.append(report.verdict == .passed
                     ? "verdict: passed; phase expand and contract accept this plan (checksum \(report.checksum.prefix(12)))"
                     : "verdict: FAILED; fix the plan (or the application) and rehearse again")
        return lines.joined(separator: "\n")
    }

    /// One line of what `observation` did; `heldBefore` is the lock on the table an earlier
    /// statement of its transaction took, which it ran under.
    private func describe(_ observation: StatementObservation, _ estimate: RehearsalAnalysis.Estimate, heldBefore: LockMode?) -> String {
        var parts: [String] = []
        if let mode = observation.lock(on: report.table) {
            let held = estimate.lockHeldMicroseconds.map { ", held about \(time($0))" } ?? ""
            parts.append("\(mode) on the table\(observation.isLockSampled ? " (sampled)" : "")\(held)")
        } else if let heldBefore {
            parts.append("under \(heldBefore) on the table, taken earlier in its transaction")
        } else {
            parts.append("no lock on the table\(observation.isLockSampled ? " seen (sampled)" : "")")
        }
        let others = observation.locks.filter { $0.relation != report.table }
        if !others.isEmpty { parts.append(others.map { "\($0.mode) on \($0.relation)" }.joined(separator: ", ")) }
        parts.append(observation.rewritten.isEmpty ? "no rewrite" : "REWRITES \(observation.rewritten.joined(separator: ", "))")
        if !observation.indexesBuilt.isEmpty { parts.append("builds \(observation.indexesBuilt.joined(separator: ", "))") }
        let scaled = estimate.scalesWithRows && scale.factor > 1
        parts.append("\(time(observation.microseconds)) on the sample" + (scaled ? ", about \(time(estimate.microseconds)) on the table" : ""))
        // Server-wide WAL counts every session's, the live application's too: said so, lest it be read as the statement's own.
        let wal = observation.walScope == .session ? "its own WAL" : "server-wide WAL during the statement"
        parts.append("\(wal) \(ReplicationText.bytes(observation.walBytes))" + (scaled ? ", about \(ReplicationText.bytes(estimate.walBytes)) on the table" : ""))
        if let error = observation.error { parts.append("FAILED: \(error)") }
        return parts.joined(separator: "; ")
    }

    /// A statement on one line, its runs of white space made one space.
    private func oneLine(_ statement: String) -> String {
        statement.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private func time(_ microseconds: Int64) -> String { RehearsalAnalysis.time(microseconds) }

    private func count(_ value: Int64) -> String { RehearsalAnalysis.count(value) }

    var json: JSONResult {
        ["id": .integer(report.id), "plan": .string(report.plan), "table": .string(report.table), "checksum": .string(report.checksum),
         "scratchDatabase": .string(report.scratchDatabase), "verdict": .string(report.verdict.rawValue),
         "lockTimeoutMs": .integer(report.lockTimeoutMilliseconds),
         "sampleRows": .integer(scale.sampleRows), "tableRows": .integer(scale.tableRows), "tableBytes": .integer(scale.tableBytes),
         "steps": .array(report.steps.map(JSONResult.string)),
         "statements": .array(zip(report.observations, report.estimates).map { observation, estimate in
             ["step": .string(observation.step), "file": observation.file.map(JSONResult.string) ?? .null,
              "transaction": .integer(Int64(observation.transaction)), "inTransaction": .bool(observation.isInTransaction),
              "sql": .string(observation.statement),
              "locks": .array(observation.locks.map { ["relation": .string($0.relation), "mode": .string($0.mode.description)] }),
              "locksSampled": .bool(observation.isLockSampled), "tableLock": observation.lock(on: report.table).map { .string($0.description) } ?? .null,
              "microseconds": .integer(observation.microseconds), "rowsVisited": observation.rowsVisited.map(JSONResult.integer) ?? .null,
              "walBytes": .integer(observation.walBytes), "walScope": .string(observation.walScope.rawValue), "rewritten": .array(observation.rewritten.map(JSONResult.string)),
              "indexesBuilt": .array(observation.indexesBuilt.map(JSONResult.string)),
              "constraintsValidated": .array(observation.constraintsValidated.map(JSONResult.string)),
              "error": observation.error.map(JSONResult.string) ?? .null,
              "estimate": ["scalesWithRows": .bool(estimate.scalesWithRows), "microseconds": .integer(estimate.microseconds),
                           "walBytes": .integer(estimate.walBytes),
                           "lockHeldMicroseconds": estimate.lockHeldMicroseconds.map(JSONResult.integer) ?? .null]]
         }),
         "replayed": .array(report.statements.map { statement in
             ["name": .string(statement.name), "application": .string(statement.application.rawValue), "sql": .string(statement.sql),
              "builtIn": .bool(statement.isBuiltIn),
              "outcomes": .array(report.replays.filter { $0.statement == statement.name }.map {
                  ["stage": .string($0.stage), "kind": .string($0.kind.rawValue), "detail": $0.detail.map(JSONResult.string) ?? .null]
              })]
         }),
         "findings": .array(report.findings.map {
             ["severity": .string($0.severity.rawValue), "step": .string($0.step),
              "statement": $0.statement.map(JSONResult.string) ?? .null, "message": .string($0.message)]
         }),
         "notes": .array(report.notes.map(JSONResult.string))]
    }
}
