/// Every part of a plan that must not change once the plan has begun to be applied, each
/// with the text its checksum is taken of: every SQL file, and the parts of `plan.json` that
/// decide what runs and what is checked (the table, the legacy sessions' pattern, each step's
/// files, and each check's query and expectation).
///
/// A file's checksum alone would let a check be edited, a file be added to a step that has not
/// run yet, or a contract file be changed after expand, unnoticed. Tuning that the operator may
/// change on the command line anyway (batch size, nice ratio, replica lag, the window) and a
/// check's message are left out.
///
/// ```swift
/// let pins = PlanPins(plan: plan, files: files)
/// for (part, text) in pins.parts { /* record or compare sha256(text) under part */ }
/// ```
public struct PlanPins: Sendable, Hashable {
    /// Each part's name, as refusals name it (`contract step's check "every document readable"`,
    /// `compiled/expand.sql`), and its text.
    public let parts: [String: String]

    /// The pins of `plan`, whose files' texts are `files` by path.
    public init(plan: MigrationPlan, files: [String: String]) {
        var parts: [String: String] = [:]
        for path in plan.sqlFilePaths { parts[path] = files[path] ?? "" }
        parts["plan.json: table"] = plan.table
        parts["plan.json: legacy application pattern"] = plan.legacyApplicationPattern ?? ""
        for step in plan.steps {
            parts["plan.json: \(step.kind) step's files"] = Self.fileList(step)
            for check in step.checks {
                let query = switch check.query {
                case .inline(let sql): "sql: \(sql)"
                case .file(let path): "sqlFile: \(path)"
                }
                parts["plan.json: \(step.kind) step's check \"\(check.name)\""] = "\(query)\nexpect: \(check.expectation.description)"
            }
        }
        self.parts = parts
    }

    /// Whether `part` is one of `plan.json`'s, not a file.
    public static func isManifestPart(_ part: String) -> Bool { part.hasPrefix("plan.json: ") }

    /// One line per file a step runs, in order, with how it runs.
    private static func fileList(_ step: PlanStep) -> String {
        func line(_ role: String, _ file: PlanSQLFile) -> String {
            "\(role) \(file.path)" + (file.runsInTransaction ? "" : " outside a transaction")
                + (file.serverVersion.map { " on \($0.description)" } ?? "")
        }
        var lines = step.apply.map { line("apply", $0) } + step.revert.map { line("revert", $0) }
        if let backfill = step.backfill { lines += [line("batch", backfill.batch), line("remaining", backfill.remaining)] }
        return lines.joined(separator: "\n")
    }
}
