/// Every part of a plan that must not change once the plan has begun to be applied, each
/// with the text its checksum is taken of: every SQL file, and the parts of `plan.json` that
/// decide what runs and what is checked (the table, the legacy sessions' pattern, each step's
/// files, and each check's query and expectation); for a declarative plan, also what the
/// operator declared (``DeclarativePlan/declarationText``) and the compiler's
/// ``CompiledPlan/compatibility``.
///
/// A file's checksum alone would let a check be edited, a file be added to a step that has not
/// run yet, or a contract file be changed after expand, unnoticed. Tuning that the operator may
/// change on the command line anyway (batch size, nice ratio, replica lag, the window) and a
/// check's message are left out.
///
/// A declarative plan's compiled parts may differ from what an earlier Cutover compiled from the
/// same declaration: ``origin(of:)`` tells them from the parts the operator wrote, so that
/// ``PlanPinComparison`` can let such a migration go on.
///
/// ```swift
/// let pins = PlanPins(plan: plan, files: files)
/// for (part, text) in pins.parts { /* record or compare sha256(text) under part */ }
/// ```
public struct PlanPins: Sendable, Hashable {
    /// Where a part comes from: what the operator wrote, or what the compiler made of it.
    public enum Origin: Sendable, Hashable {
        /// A hand-written SQL file; any part of a plan of SQL files.
        case handWritten
        /// A part of a declarative plan's `plan.json` the operator wrote, as this version reads
        /// it: the table, the legacy sessions' pattern, one of the plan's own checks.
        case declared
        /// What the compiler made of the declaration: a file under `compiled/`, a step's list
        /// of files, a check the compiler derives (or one no longer in `plan.json`).
        case compiled
        /// A declarative plan's ``DeclarativePlan/declarationText``.
        case declaration
        /// The ``CompiledPlan/compatibility`` a declarative plan was compiled at.
        case compatibility(Int)
    }

    /// The name of the part that pins a declarative plan's declaration.
    public static let declarationPart = "plan.json: declaration"

    /// Each part's name, as refusals name it (`contract step's check "every document readable"`,
    /// `compiled/expand.sql`), and its text.
    public let parts: [String: String]
    /// Whether the plan is declarative (format 2), so that its compiled parts are told apart.
    public let isDeclarative: Bool
    /// The compiler compatibility the plan is compiled at; nil for a plan of SQL files.
    public let compatibility: Int?
    /// The parts of a declarative plan's `plan.json` that the operator wrote.
    private let declaredParts: Set<String>

    /// The pins of `plan`, whose files' texts are `files` by path; `compiled`, when the plan
    /// is declarative, is what the compiler made of it.
    public init(plan: MigrationPlan, files: [String: String], compiled: CompiledPlan? = nil) {
        var parts: [String: String] = [:]
        for path in plan.sqlFilePaths { parts[path] = files[path] ?? "" }
        parts["plan.json: table"] = plan.table
        parts["plan.json: legacy application pattern"] = plan.legacyApplicationPattern ?? ""
        for step in plan.steps {
            parts[Self.filesPart(step.kind)] = Self.fileList(step)
            for check in step.checks {
                let query = switch check.query {
                case .inline(let sql): "sql: \(sql)"
                case .file(let path): "sqlFile: \(path)"
                }
                parts[Self.checkPart(step.kind, check.name)] = "\(query)\nexpect: \(check.expectation.description)"
            }
        }
        var declared: Set<String> = ["plan.json: table", "plan.json: legacy application pattern"]
        if let compiled {
            parts[Self.declarationPart] = compiled.declaration.declarationText
            parts[Self.compatibilityPart(CompiledPlan.compatibility)] = String(CompiledPlan.compatibility)
            for (kind, checks) in compiled.declaration.checks {
                for check in checks { declared.insert(Self.checkPart(kind, check.name)) }
            }
        }
        self.parts = parts
        isDeclarative = compiled != nil
        compatibility = compiled.map { _ in CompiledPlan.compatibility }
        declaredParts = declared
    }

    /// The name of the part that pins compiler compatibility `number`: the number is in the name,
    /// so that a refusal can say which one the plan began at.
    public static func compatibilityPart(_ number: Int) -> String { compatibilityPrefix + String(number) }

    private static let compatibilityPrefix = "compiler compatibility "

    /// Where `part` comes from in this plan; a part no longer in it is judged by its name.
    public func origin(of part: String) -> Origin {
        if part == Self.declarationPart { return .declaration }
        if part.hasPrefix(Self.compatibilityPrefix), let number = Int(part.dropFirst(Self.compatibilityPrefix.count)),
           Self.compatibilityPart(number) == part {
            return .compatibility(number)
        }
        guard isDeclarative else { return .handWritten }
        if declaredParts.contains(part) { return .declared }
        if part.hasPrefix("compiled/") || part.hasPrefix("plan.json: ") { return .compiled }
        return .handWritten
    }

    private static func filesPart(_ kind: PlanStep.Kind) -> String { "plan.json: \(kind) step's files" }

    private static func checkPart(_ kind: PlanStep.Kind, _ name: String) -> String { "plan.json: \(kind) step's check \"\(name)\"" }

    /// One line per file a step runs, in order, with how it runs.
    private static func fileList(_ step: PlanStep) -> String {
        func line(_ role: String, _ file: PlanSQLFile) -> String {
            "\(role) \(file.path)" + (file.runsInTransaction ? "" : " outside a transaction")
                + (file.serverVersion.map { " on \($0.description)" } ?? "")
        }
        var lines = step.apply.map { line("apply", $0) } + step.revert.map { line("revert", $0) }
        if let backfill = step.backfill {
            lines += [line("batch", backfill.batch), line("remaining", backfill.remaining)]
            if let direct = backfill.directBatch { lines.append(line("direct batch", direct)) }
        }
        return lines.joined(separator: "\n")
    }
}
