import Cutover
import Foundation
import Testing

/// The example plans of the repository's `examples/<name>/plan.json` and, under
/// `Fixtures/declarative/<name>/`, the golden files of what they compile to: `compiled/*.sql`,
/// byte for byte, and `steps.txt`, each step's files, statements' locks and checks. `CUTOVER_REGENERATE_GOLDENS=1 swift test --filter Declarative`
/// writes the goldens afresh instead of comparing; review the diff before committing it.
enum DeclarativeGolden {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/declarative")

    /// The repository's `examples/`, where the plans are.
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples")

    static var isRegenerating: Bool { ProcessInfo.processInfo.environment["CUTOVER_REGENERATE_GOLDENS"] == "1" }

    /// The example's plan, read and compiled.
    static func compile(_ example: String) throws -> CompiledPlan {
        let bytes = Array(try Data(contentsOf: examples.appendingPathComponent("\(example)/plan.json")))
        return try DeclarativePlan(manifest: bytes).compile()
    }

    /// Every golden file of the example and its expected text, by path inside the example's folder.
    static func expected(for compiled: CompiledPlan) -> [String: String] {
        var texts = compiled.fileTexts
        texts["steps.txt"] = summary(compiled)
        return texts
    }

    /// The golden files now in the example's folder, by path.
    static func stored(_ example: String) throws -> [String: String] {
        let root = folder.appendingPathComponent(example)
        var texts: [String: String] = [:]
        let compiled = root.appendingPathComponent("compiled")
        if FileManager.default.fileExists(atPath: compiled.path) {
            for name in try FileManager.default.contentsOfDirectory(atPath: compiled.path) {
                texts["compiled/" + name] = try String(contentsOf: compiled.appendingPathComponent(name), encoding: .utf8)
            }
        }
        let steps = root.appendingPathComponent("steps.txt")
        if FileManager.default.fileExists(atPath: steps.path) { texts["steps.txt"] = try String(contentsOf: steps, encoding: .utf8) }
        return texts
    }

    /// Writes the example's goldens afresh, removing compiled files it no longer makes.
    static func write(_ example: String, _ texts: [String: String]) throws {
        let root = folder.appendingPathComponent(example)
        let compiled = root.appendingPathComponent("compiled")
        if FileManager.default.fileExists(atPath: compiled.path) { try FileManager.default.removeItem(at: compiled) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("compiled"), withIntermediateDirectories: true)
        for (path, text) in texts { try Data(text.utf8).write(to: root.appendingPathComponent(path)) }
    }

    /// Each step: its files (how they run), each statement's lock and work, and its checks.
    static func summary(_ compiled: CompiledPlan) -> String {
        let byPath = Dictionary(uniqueKeysWithValues: compiled.files.map { ($0.path, $0) })
        var lines = ["plan \(compiled.plan.name) on \(compiled.plan.table)"]
        func describe(_ role: String, _ file: PlanSQLFile) {
            let how = [file.runsInTransaction ? nil : "outside a transaction", file.serverVersion?.description].compactMap { $0 }
            lines.append("  \(role) \(file.path)" + (how.isEmpty ? "" : " (\(how.joined(separator: ", ")))"))
            for statement in byPath[file.path]?.statements ?? [] {
                let first = statement.sql.split(separator: "\n").first.map(String.init) ?? ""
                lines.append("    \(first.prefix(60)) — \(statement)")
            }
        }
        for step in compiled.plan.steps {
            lines.append("\(step.kind)")
            for file in step.apply { describe("apply", file) }
            for file in step.revert { describe("revert", file) }
            if let backfill = step.backfill {
                describe("batch", backfill.batch)
                describe("remaining", backfill.remaining)
                lines.append("  batch size \(backfill.batchSize), nice ratio \(backfill.niceRatio)")
            }
            for check in step.checks {
                guard case .inline(let sql) = check.query else { continue }
                lines.append("  check \(check.name) (\(check.expectation)): \(sql)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
