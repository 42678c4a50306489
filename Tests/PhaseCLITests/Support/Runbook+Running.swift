import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

extension Runbook {
    /// The runbooks of the forward steps, in order: each starts where the one before ends.
    static let forwardSteps = ["expand.md", "switch.md", "backfill.md", "contract.md"]

    /// Brings `db` to this runbook's starting phase by following the forward steps' runbooks
    /// before it, then follows this one. Every mismatch is recorded at its line in the runbook.
    func follow(on db: WorkflowDatabase) async throws {
        if startingPhase == "baseline" {
            // No forward runbook ends at baseline: it is where `phase init` leaves a database.
            let run = try await db.phase("init")
            #expect(run.status == 0, "phase init: \(run.diagnostics)")
        }
        for name in Self.forwardSteps {
            let phase = try await Self.phase(of: db)
            if phase == startingPhase { break }
            let earlier = try Runbook.named(name)
            guard earlier.startingPhase == phase else {
                Issue.record("to reach phase \(startingPhase) for \(self.name): \(name) starts at \(earlier.startingPhase), the database is at \(phase)")
                return
            }
            try await earlier.play(on: db)
        }
        let reached = try await Self.phase(of: db)
        guard reached == startingPhase else {
            Issue.record("\(name) starts at \(startingPhase); following the forward runbooks left the database at \(reached)",
                         sourceLocation: location(1))
            return
        }
        try await play(on: db)
    }

    /// Runs every step, in order, on `db`.
    func play(on db: WorkflowDatabase) async throws {
        for step in steps {
            switch step.action {
            case .phase(let arguments, let exitCode):
                // The runbooks go through `phase rehearse`, so the rehearsal gate applies to them.
                let url = db.url
                let run = try await onThread {
                    try PhaseBinary.run(arguments, databaseURL: url, environment: ["CUTOVER_SKIP_REHEARSAL": ""])
                }
                let shown = "phase \(arguments.joined(separator: " "))"
                if run.status != exitCode {
                    Issue.record("\(shown) exited \(run.status), the runbook says \(exitCode)\n\(run.output)\(run.diagnostics)",
                                 sourceLocation: location(step.line))
                }
                check(step, printed: run, command: shown)
            case .psql(let script):
                let url = db.url
                let run = try await onThread { try RunbookPsql.run(script, databaseURL: url) }
                if run.status != 0 {
                    Issue.record("psql exited \(run.status)\n\(run.output)\(run.diagnostics)", sourceLocation: location(step.line))
                }
                check(step, printed: run, command: "this SQL")
            case .meanwhile(let sql):
                do {
                    try await db.sql { try $0.execute(unsafeSQL: sql) }
                } catch {
                    Issue.record("the meanwhile SQL failed: \(error)", sourceLocation: location(step.line))
                }
            }
        }
    }

    /// The phase of the drafts plan, `none` before `phase init`.
    static func phase(of db: WorkflowDatabase) async throws -> String {
        guard try await db.value(Bool.self, "SELECT to_regclass('cutover.migration_state') IS NOT NULL") == true else { return "none" }
        return try await db.phaseName() ?? "none"
    }

    private func check(_ step: Step, printed run: PhaseBinary.Run, command: String) {
        guard let line = step.expectedLine else { return }
        if let missing = Self.firstMissing(step.expected, in: [run.output, run.diagnostics]) {
            Issue.record("""
                \(command) did not print the runbook's line \(missing.offset + 1) of its output: \(missing.text)
                standard output:
                \(run.output)
                standard error:
                \(run.diagnostics)
                """, sourceLocation: location(line + missing.offset))
        }
    }

    /// The first expected line that the streams do not print. Each non-blank expected line
    /// must match a whole printed line, later than the last one matched in the same stream,
    /// so the order within standard output and within standard error is kept.
    static func firstMissing(_ expected: [String], in streams: [String]) -> (offset: Int, text: String)? {
        let printed = streams.map { $0.components(separatedBy: "\n").map(trimmedRight) }
        var cursors = Array(repeating: 0, count: printed.count)
        for (offset, wanted) in expected.enumerated() {
            let pattern = trimmedRight(wanted)
            if pattern.isEmpty { continue }
            let found = printed.indices.lazy.compactMap { stream -> (Int, Int)? in
                let lines = printed[stream]
                return lines[cursors[stream]...].firstIndex { matches($0, pattern) }.map { (stream, $0) }
            }.first
            guard let (stream, index) = found else { return (offset, wanted) }
            cursors[stream] = index + 1
        }
        return nil
    }

    /// Whether `line` is `pattern`, where each `…` stands for any text.
    static func matches(_ line: String, _ pattern: String) -> Bool {
        let pieces = pattern.components(separatedBy: "…")
        guard pieces.count > 1 else { return line == pattern }
        guard line.hasPrefix(pieces[0]), line.hasSuffix(pieces[pieces.count - 1]),
              line.count >= pieces[0].count + pieces[pieces.count - 1].count else { return false }
        var rest = line.dropFirst(pieces[0].count).dropLast(pieces[pieces.count - 1].count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }

    private static func trimmedRight(_ text: String) -> String {
        String(text.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }

    private func location(_ line: Int) -> SourceLocation {
        SourceLocation(fileID: "docs/runbooks/\(name)", filePath: path, line: max(line, 1), column: 1)
    }
}
