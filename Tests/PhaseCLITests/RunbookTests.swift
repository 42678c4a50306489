import CutoverTestSupport
import Foundation
import Testing

/// The runbooks in docs/runbooks, followed against a real server: every command they show runs
/// and prints what they say, so they cannot drift from the tool.
// Every runbook runs at once, each a few dozen phase commands beside the rest of the suite on
// two cores: the limit only turns a hang into a failure.
@Suite("runbooks", .timeLimit(.minutes(10)))
struct RunbookTests {
    /// The runbooks the operator documentation promises.
    static let promised = ["expand.md", "switch.md", "backfill.md", "contract.md", "rollback.md", "ledger-retention.md",
                           "roles.md", "duplicate-side-effect.md", "standbys.md", "poolers.md", "failover.md"]

    @Test("every command of the runbook runs and prints what the runbook shows", arguments: Runbook.names)
    func followRunbook(name: String) async throws {
        let runbook = try Runbook.named(name)
        #expect(runbook.steps.contains { if case .phase = $0.action { true } else { false } }, "\(name) runs no phase command")
        let db = try await WorkflowDatabase.make("runbook_\(name.prefix { $0 != "." })", rows: 2500)
        try await runbook.follow(on: db)
    }

    @Test func everyPromisedRunbookIsThereAndTheIndexLinksEachOne() throws {
        let names = Runbook.names
        for name in Self.promised { #expect(names.contains(name), "docs/runbooks/\(name) is missing") }
        let index = try String(contentsOf: Runbook.folder.appendingPathComponent("README.md"), encoding: .utf8)
        for name in names { #expect(index.contains("](\(name))"), "docs/runbooks/README.md does not link \(name)") }
        for name in Runbook.forwardSteps { #expect(names.contains(name)) }
    }

    @Test func theConventionsAreReadAsDocumented() throws {
        let text = """
            # Example
            **Starts at:** `expanded`, after expand.

            ```sh
            export DATABASE_URL=postgresql://migrator@db.example/app
            phase status
            phase contract --yes --window '10m'   # exit 3: refused before the window
            phase observe --follow   # keeps running; Ctrl-C stops it
            ```

            ```output
            contract refused …
            ```

            <!-- meanwhile: UPDATE t SET a = 1 -->

            <!-- meanwhile:
            UPDATE t SET b = 2;
            -->

            ```sql runbook
            SELECT 1;
            ```

            ```sql
            SELECT 'shown, not run';
            ```
            """
        let runbook = try Runbook(name: "example.md", path: "/example.md", text: text)
        #expect(runbook.startingPhase == "expanded")
        #expect(runbook.steps.count == 5)
        guard case .phase(let status, 0) = runbook.steps[0].action, case .phase(let contract, 3) = runbook.steps[1].action,
              case .meanwhile(let first) = runbook.steps[2].action, case .meanwhile(let second) = runbook.steps[3].action,
              case .psql(let sql) = runbook.steps[4].action else {
            Issue.record("unexpected steps: \(runbook.steps.map(\.action))")
            return
        }
        #expect(status == ["status"])
        #expect(contract == ["contract", "--yes", "--window", "10m"])
        #expect(runbook.steps[1].line == 7)
        #expect(runbook.steps[1].expected == ["contract refused …"])
        #expect(runbook.steps[1].expectedLine == 12)
        #expect(first.trimmingCharacters(in: .whitespaces) == "UPDATE t SET a = 1")
        #expect(second.trimmingCharacters(in: .whitespacesAndNewlines) == "UPDATE t SET b = 2;")
        #expect(sql == "SELECT 1;\n")
    }

    @Test func aRunbookThatBreaksTheConventionsIsRefused() {
        #expect(throws: RunbookError.self) { try Runbook(name: "x.md", path: "/x.md", text: "```sh\nphase status\n```\n") }
        #expect(throws: RunbookError.self) {
            try Runbook(name: "x.md", path: "/x.md", text: "**Starts at:** `nowhere`\n")
        }
        #expect(throws: RunbookError.self) {
            try Runbook(name: "x.md", path: "/x.md", text: "**Starts at:** `none`\n```output\nfloating\n```\n")
        }
        #expect(throws: RunbookError.self) {
            try Runbook(name: "x.md", path: "/x.md", text: "**Starts at:** `none`\n```sh\nphase status # exit soon\n```\n")
        }
        #expect(throws: RunbookError.self) { try Runbook(name: "x.md", path: "/x.md", text: "**Starts at:** `none`\n```sh\n") }
    }

    @Test func aRunbookThatStartsAtBaselineIsFollowedAfterInit() async throws {
        let runbook = try Runbook(name: "baseline.md", path: "/baseline.md", text: """
            **Starts at:** `baseline`

            ```sh
            phase status
            ```

            ```output
            phase baseline, writer legacy, epoch 0
            ```
            """)
        let db = try await WorkflowDatabase.make("runbook_baseline", rows: 0)
        try await runbook.follow(on: db)
        #expect(try await db.phaseName() == "baseline")
    }

    @Test func expectedLinesMatchWholeLinesInOrderWithinEachStream() {
        let output = "plan drafts\nphase modern, writer modern, epoch 2  \nnext: backfill"
        let diagnostics = "applied expand.sql\nbackfill: 10/10 done in 0s, 950/s"
        #expect(Runbook.firstMissing(["phase modern, writer modern, epoch 2", "", "next: backfill"], in: [output, diagnostics]) == nil)
        #expect(Runbook.firstMissing(["applied expand.sql", "plan drafts", "backfill: 10/10 done in …"], in: [output, diagnostics]) == nil)
        #expect(Runbook.firstMissing(["next: backfill", "plan drafts"], in: [output, diagnostics])?.offset == 1)
        #expect(Runbook.firstMissing(["phase modern"], in: [output, diagnostics])?.text == "phase modern")
        #expect(Runbook.matches("last seen 2026-11-30T13:14:32Z", "last seen …"))
        #expect(Runbook.matches("a 1 b 2 c", "a … b … c"))
        #expect(!Runbook.matches("a 1 c 2 b", "a … b … c"))
        #expect(!Runbook.matches("ab", "ab…b"))
    }
}
