import CommandLineKit
import Cutover
import CutoverPostgres
import Foundation

/// What `phase plan` shows: for every step and each revert, its files and what they do to the
/// table, statement by statement with the lock each takes, and the step's checks.
///
/// A declarative plan's statements carry the locks the compiler declares for them; a plan of SQL
/// files declares none, so its locks are estimated from each statement's first words
/// (``LockSummary``) and said to be.
struct PlanResult: CommandResult {
    let source: PlanSource
    /// Whether statements and hand-written files are shown whole rather than by their first line.
    let isShowingSQL: Bool

    /// The longest a statement's first line is shown before it is cut with `…`.
    static let summaryLength = 110

    /// The generated files by path; empty for a plan of SQL files.
    private var compiledFiles: [String: CompiledFile] {
        Dictionary(uniqueKeysWithValues: (source.compiled?.files ?? []).map { ($0.path, $0) })
    }

    var text: String {
        let plan = source.plan
        let compiled = compiledFiles
        var out = ["plan \(plan.name) for table \(plan.table) (\(source.location))",
                   "modern-writer window: \(DurationText.format(plan.modernWriterWindow))"
                   + (plan.legacyApplicationPattern.map { ", legacy sessions: application_name LIKE '\($0)'" } ?? "")]
        if let declaration = source.compiled?.declaration {
            out.append("declarative plan (format 2), key \(declaration.key.joined(separator: ", "))"
                       + (declaration.columns.isEmpty ? "" : ", reads \(declaration.columns.joined(separator: ", "))"))
            out.append("operations:")
            out += declaration.operations.map(OperationText.line).map { "  \($0.kind) \($0.summary)" }
            let rewriting = source.compiled?.files.flatMap(\.statements).filter(\.rewritesTable) ?? []
            out.append("locks: as the compiler declares them for each statement; "
                       + (rewriting.isEmpty ? "no statement rewrites the table" : "\(rewriting.count) statements REWRITE THE TABLE")
                       + (declaration.handWrittenFilePaths.isEmpty ? ""
                          : "; the hand-written files declare none: theirs are estimated from each statement's first words"))
        } else {
            out.append("plan of SQL files (format 1): it declares no locks; each is estimated from its statement's first words")
        }
        for step in plan.steps {
            out.append("\(step.kind):")
            if let effect = Self.effect(of: files(of: step).compactMap { compiled[$0.path] }) {
                out.append("  on the table: \(effect)")
            }
            if step.kind == .switch {
                out.append("  the runner commits the writer path with a new epoch and notifies every instance; no SQL runs on the table")
            }
            for file in step.apply { out += fileLines("apply", file, compiled[file.path]) }
            if !step.revert.isEmpty {
                out.append("  phase rollback \(step.kind) runs"
                           + (step.kind == .contract ? " (only before the last file):" : ":"))
            }
            for file in step.revert { out += fileLines("revert", file, compiled[file.path]) }
            if let backfill = step.backfill {
                let batches = backfill.directBatch.map { "\($0.path), or \(backfill.batch.path) where a row stays held" } ?? backfill.batch.path
                out.append("  batches of \(backfill.batchSize) with \(batches); remaining rows by \(backfill.remaining.path)")
                let ratio = ValueType.decimal(in: PlanLimits.niceRatio).format(backfill.niceRatio)
                out.append(backfill.niceRatio > 0
                    ? "  nice ratio \(ratio): after each batch, a pause of \(ratio) times the batch's own time"
                    : "  nice ratio 0: no pause between batches")
                out.append(backfill.throttle.targetBatchTime > .zero
                    ? "  target batch time \(DurationText.format(backfill.throttle.targetBatchTime)): the batch size grows and shrinks so that each batch takes about that"
                    : "  target batch time 0s: every batch is of the batch size")
                out.append("  replica lag ceiling \(DurationText.format(backfill.maximumReplicaLag)): no batch starts while a standby replays further behind")
                if let sessions = backfill.throttle.maximumActiveSessions {
                    out.append("  active sessions ceiling \(sessions): no batch starts while more sessions of the server run a statement")
                }
                if let query = backfill.throttle.throttleQuery {
                    out.append("  throttle query: no batch starts while it answers true: " + Self.oneLine(query))
                }
                if let direct = backfill.directBatch {
                    out += fileLines("batch", direct, compiled[direct.path])
                    out.append("    locks each row as it reaches it; one that waits more than \(DurationText.format(BackfillEngine.Options().rowLockWait)) for a row another transaction holds is rolled back, and the skipping batch converts the same keys but that row, which a later pass converts")
                    out += fileLines("skipping batch", backfill.batch, compiled[backfill.batch.path])
                } else {
                    out += fileLines("batch", backfill.batch, compiled[backfill.batch.path])
                }
                out += fileLines("remaining", backfill.remaining, compiled[backfill.remaining.path])
                if let split = backfill.split { out += fileLines("split", split, compiled[split.path]) }
            }
            for check in step.checks {
                out.append("  check \(check.name) (expect \(check.expectation))")
                out.append("    " + (isShowingSQL ? indented(checkSQL(check), by: 4) : Self.oneLine(checkSQL(check))))
            }
            if step.kind == .contract, let last = step.apply.last {
                out.append("  irreversible once \(last.path) has run: nothing brings the legacy representation back")
            }
        }
        out.append("the runner adds its own checks to each step (readers, writer window, legacy sessions); phase check STEP runs them all")
        return out.joined(separator: "\n")
    }

    var json: JSONResult {
        let plan = source.plan
        let compiled = compiledFiles
        let declaration = source.compiled?.declaration
        return [
            "name": .string(plan.name), "table": .string(plan.table), "location": .string(source.location),
            "format": .integer(Int64(declaration == nil ? PlanLimits.format : PlanLimits.declarativeFormat)),
            "locksDeclared": .bool(declaration != nil),
            "modernWriterWindow": .string(DurationText.format(plan.modernWriterWindow)),
            "legacyApplicationPattern": plan.legacyApplicationPattern.map(JSONResult.string) ?? .null,
            "key": declaration.map { .array($0.key.map(JSONResult.string)) } ?? .null,
            "operations": declaration.map { plan in
                .array(plan.operations.map(OperationText.line).map { ["kind": .string($0.kind), "summary": .string($0.summary)] })
            } ?? .null,
            "steps": .array(plan.steps.map { step in
                ["kind": .string(step.kind.rawValue),
                 "apply": .array(step.apply.map { fileJSON($0, compiled[$0.path]) }),
                 "revert": .array(step.revert.map { fileJSON($0, compiled[$0.path]) }),
                 "backfill": step.backfill.map { backfill in
                     ["batch": .string(backfill.batch.path), "remaining": .string(backfill.remaining.path),
                      "directBatch": backfill.directBatch.map { .string($0.path) } ?? .null,
                      "batchSize": .integer(Int64(backfill.batchSize)), "niceRatio": .number(backfill.niceRatio),
                      "replicaLagCeiling": .string(DurationText.format(backfill.maximumReplicaLag)),
                      "targetBatchTime": .string(DurationText.format(backfill.throttle.targetBatchTime)),
                      "maxActiveSessions": backfill.throttle.maximumActiveSessions.map { .integer(Int64($0)) } ?? .null,
                      "throttleQuery": backfill.throttle.throttleQuery.map { .string($0) } ?? .null,
                      "sqlFiles": .array(([backfill.batch, backfill.remaining] + [backfill.split, backfill.directBatch].compactMap { $0 })
                          .map { fileJSON($0, compiled[$0.path]) })]
                 } ?? .null,
                 "tableEffect": declaration == nil ? .null : Self.effectJSON(files(of: step).compactMap { compiled[$0.path] }),
                 "irreversibleAfter": step.kind == .contract ? step.apply.last.map { .string($0.path) } ?? .null : .null,
                 "checks": .array(step.checks.map { check in
                     ["name": .string(check.name), "expect": .string(check.expectation.description), "sql": .string(checkSQL(check)),
                      "sqlFile": check.filePath.map(JSONResult.string) ?? .null, "message": .string(check.message)]
                 })]
            }),
        ]
    }

    // MARK: Files

    /// The files a step runs forward: apply, then the backfill's batch and count.
    private func files(of step: PlanStep) -> [PlanSQLFile] {
        step.apply + [step.backfill?.directBatch, step.backfill?.batch, step.backfill?.remaining].compactMap { $0 }
    }

    /// `  apply compiled/expand.sql (in a transaction); locks: …`, then each statement and its lock.
    private func fileLines(_ role: String, _ file: PlanSQLFile, _ generated: CompiledFile?) -> [String] {
        let conditions = [file.runsInTransaction ? "in a transaction" : "outside a transaction"] + [file.serverVersion?.description].compactMap { $0 }
        let origin = generated == nil && source.compiled != nil ? "hand-written, " : ""
        var lines = ["  \(role) \(file.path) (\(origin)\(conditions.joined(separator: "; "))); locks: \(locks(file, generated))"]
        if let generated {
            for statement in generated.statements {
                lines.append("    " + (isShowingSQL ? indented(statement.sql, by: 4) : Self.firstLine(statement.sql)))
                lines.append("      \(statement.description)")
            }
        } else if isShowingSQL {
            lines.append("    " + indented(source.text(file.path).trimmingCharacters(in: .whitespacesAndNewlines), by: 4))
        }
        return lines
    }

    private func fileJSON(_ file: PlanSQLFile, _ generated: CompiledFile?) -> JSONResult {
        ["path": .string(file.path), "transaction": .bool(file.runsInTransaction),
         "serverVersion": file.serverVersion.map { .string($0.manifestText) } ?? .null,
         "generated": .bool(generated != nil), "locksDeclared": .bool(generated != nil),
         "locks": .string(locks(file, generated)), "sql": .string(source.text(file.path)),
         "statements": generated.map { file in
             .array(file.statements.map { statement in
                 ["sql": .string(statement.sql), "lock": statement.lock.map { .string($0.rawValue) } ?? .null,
                  "work": .string(Self.workName(statement.work)), "rewritesTable": .bool(statement.rewritesTable),
                  "note": statement.note.map(JSONResult.string) ?? .null]
             })
         } ?? .null]
    }

    /// The declared locks of a generated file, strongest first; an estimate for a hand-written one.
    private func locks(_ file: PlanSQLFile, _ generated: CompiledFile?) -> String {
        guard let generated else { return LockSummary.describe(source.text(file.path)) }
        let declared = Set(generated.statements.compactMap(\.lock))
        let names = TableLock.allCases.reversed().filter(declared.contains).map(\.rawValue)
        return names.isEmpty ? "none on the table" : names.joined(separator: ", ")
    }

    private func checkSQL(_ check: PlanCheck) -> String {
        switch check.query {
        case .inline(let sql): sql
        case .file(let path): source.text(path).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private func indented(_ text: String, by width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n" + String(repeating: " ", count: width))
    }

    /// A statement on one line, up to its body when it has a dollar-quoted one, cut at ``summaryLength``.
    static func firstLine(_ sql: String) -> String {
        let line = oneLine(sql.range(of: " AS $").map { String(sql[..<$0.lowerBound]) } ?? sql)
        return line.count > summaryLength ? String(line.prefix(summaryLength - 1)) + "…" : line
    }

    /// The text with every run of white space made one space.
    static func oneLine(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The work's name in JSON: `catalog`, `scan`, `sample`, `rows`, `rewrite`.
    static func workName(_ work: TableWork) -> String {
        switch work {
        case .catalog: "catalog"
        case .scan: "scan"
        case .sample: "sample"
        case .rows: "rows"
        case .rewrite: "rewrite"
        }
    }

    // MARK: What a step does to the table

    /// One line: the strongest lock a step's catalog changes hold, whether it scans or writes
    /// rows and under what, and whether anything rewrites the table; nil without declared locks.
    static func effect(of files: [CompiledFile]) -> String? {
        let statements = files.flatMap(\.statements)
        guard !statements.isEmpty else { return nil }
        var parts: [String] = []
        if let lock = strongest(statements.filter { $0.work == .catalog }) {
            parts.append("\(lock.rawValue) at most, held for catalog changes only (each waits at most --lock-timeout)")
        }
        if let lock = strongest(statements.filter { $0.work == .scan }) {
            parts.append("reads the whole table under \(lock.rawValue)" + (rank(lock) <= rank(.shareUpdateExclusive) ? ", reads and writes go on" : ""))
        }
        if let lock = strongest(statements.filter { $0.work == .rows }) {
            parts.append("writes rows under \(lock.rawValue), locking only the rows it writes")
        }
        let rewrites = statements.filter(\.rewritesTable)
        parts.append(rewrites.isEmpty ? "no rewrite" : "REWRITES THE TABLE under \(strongest(rewrites)?.rawValue ?? "its lock")")
        parts += Set(statements.compactMap(\.note)).sorted()
        return parts.joined(separator: "; ")
    }

    static func effectJSON(_ files: [CompiledFile]) -> JSONResult {
        let statements = files.flatMap(\.statements)
        func lock(_ work: TableWork) -> JSONResult {
            strongest(statements.filter { $0.work == work }).map { .string($0.rawValue) } ?? .null
        }
        return ["strongestLock": strongest(statements).map { .string($0.rawValue) } ?? .null,
                "catalogLock": lock(.catalog), "scanLock": lock(.scan), "rowsLock": lock(.rows),
                "rewritesTable": .bool(statements.contains(where: \.rewritesTable)),
                "notes": .array(Set(statements.compactMap(\.note)).sorted().map(JSONResult.string))]
    }

    private static func strongest(_ statements: [CompiledStatement]) -> TableLock? {
        statements.compactMap(\.lock).max { rank($0) < rank($1) }
    }

    /// A lock's strength: its place in ``TableLock/allCases``, weakest first.
    private static func rank(_ lock: TableLock) -> Int {
        TableLock.allCases.firstIndex(of: lock) ?? 0
    }
}

extension PlanCheck {
    /// The file a check reads its query from; nil for an inline one.
    var filePath: String? {
        guard case .file(let path) = query else { return nil }
        return path
    }
}
