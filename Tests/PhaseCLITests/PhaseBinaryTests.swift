import CommandLineKit
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PhaseCLI
import PostgresClient
import PostgresFaults
import Testing

/// The built `phase` executable: help, usage errors and bad input, without a database.
@Suite("phase executable")
struct PhaseBinaryTests {
    @Test("every real command's help from the binary matches its golden text",
          arguments: PhaseCommandTree.root.commandPaths)
    func help(path: [String]) throws {
        let run = try PhaseBinary.run(path + ["--help"])
        #expect(run.status == 0)
        #expect(run.diagnostics.isEmpty)
        try Golden.expect(run.output, matches: HelpTests.goldenName(path))
    }

    @Test("-h and 'phase help' give the same page as --help", arguments: [["contract", "-h"], ["help", "status"], ["help", "ledger", "prune"]])
    func helpSpellings(arguments: [String]) throws {
        let run = try PhaseBinary.run(arguments)
        #expect(run.status == 0)
        #expect(run.diagnostics.isEmpty)
        try Golden.expect(run.output, matches: HelpTests.goldenName(arguments.filter { $0 != "help" && !$0.hasPrefix("-") }))
    }

    @Test("usage errors exit 64 with the golden message", arguments: [
        ("unknown-command", ["expnad"]),
        ("bad-path", ["switch", "sideways"]),
        ("missing-value", ["backfill", "--batch-size"]),
        ("out-of-range", ["backfill", "--batch-size", "0"]),
        ("bad-ratio", ["backfill", "--nice-ratio", "a-quarter"]),
        ("bad-duration", ["expand", "--lock-timeout", "soon"]),
        ("no-command", []),
    ])
    func usageErrors(name: String, arguments: [String]) throws {
        let run = try PhaseBinary.run(arguments)
        #expect(run.status == 64)
        #expect(run.output.isEmpty)
        try Golden.expect(run.diagnostics, matches: "binary-usage-\(name).txt")
    }

    @Test func contractWithoutYesIsRefusedBeforeConnecting() throws {
        let run = try PhaseBinary.run(["contract"], databaseURL: "host=127.0.0.1 port=1 connect_timeout=2")
        #expect(run.status == 64)
        #expect(run.diagnostics.hasPrefix("Error: contract removes the legacy representation and cannot be undone; pass --yes to confirm"))
    }

    @Test func anUnreachableDatabaseExits69WithoutThePassword() throws {
        let refusing = try LoopbackSocket.refusing()
        let run = try PhaseBinary.run(["status"], databaseURL: "postgresql://app:Hidden-Secret-77@127.0.0.1:\(refusing.port)/app")
        #expect(run.status == 69)
        #expect(run.diagnostics.hasPrefix("Error: database unreachable: could not connect to PostgreSQL:"))
        #expect(!run.diagnostics.contains("Hidden-Secret-77"))
        #expect(!run.output.contains("Hidden-Secret-77"))
    }

    @Test func aMalformedDatabaseURLIsAUsageError() throws {
        let run = try PhaseBinary.run(["status"], databaseURL: "postgresql://app:Hidden-Secret-77@127.0.0.1:notaport/app")
        #expect(run.status == 64)
        #expect(run.diagnostics.contains("invalid connection string"))
        #expect(!run.diagnostics.contains("Hidden-Secret-77"))
    }

    @Test func aMissingPlanFolderIsNamed() throws {
        let run = try PhaseBinary.run(["--plan", "/nonexistent/plan", "plan"])
        #expect(run.status == 64)
        #expect(run.diagnostics == "Error: plan folder /nonexistent/plan does not exist\n")
    }

    @Test("a malformed plan.json is refused naming the file and the field", arguments: [
        (#"{"format": 1, "name": "p", "table": "t", "modernWriterWindow": "10m", "steps": [{"kind": "migrate"}]}"#, "steps[0].kind"),
        (#"{"format": 1, "name": "p", "table": "t", "modernWriterWindow": "10m", "steps": [{"kind": "expand", "apply": ["../../etc/passwd.sql"], "revert": []}]}"#, "steps[0].apply[0]"),
        (#"{"format": 1, "name": "p""#, ""),
    ])
    func malformedPlan(manifest: String, field: String) throws {
        let folder = TestScratch.url("plan")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try manifest.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
        let run = try PhaseBinary.run(["--plan", folder.path, "plan"])
        #expect(run.status == 64)
        #expect(run.diagnostics.hasPrefix("Error: \(folder.path)/plan.json: \(field)"), "\(run.diagnostics)")
        #expect(run.diagnostics.split(separator: "\n").count == 1)
    }

    @Test func thePlanCommandShowsTheBuiltInPlanWithoutADatabase() throws {
        let run = try PhaseBinary.run(["plan", "--format", "json"])
        #expect(run.status == 0)
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        #expect(plan["name"] as? String == "drafts")
        #expect(run.output.contains("contract_drop.sql"))
        let compact = run.output.replacing(" ", with: "").replacing("\n", with: "")
        #expect(compact.contains(#""backfill":{"batch":"compiled/backfill_batch.sql","batchSize":1000,"directBatch":"compiled/backfill_batch_direct.sql","#
                                 + #""maxActiveSessions":null,"niceRatio":0,"#))
        #expect(compact.contains(#""targetBatchTime":"50ms","throttleQuery":null}"#))

        let text = try PhaseBinary.run(["plan"])
        #expect(text.status == 0)
        #expect(text.output.contains("""
              batches of 1000 with compiled/backfill_batch_direct.sql, or compiled/backfill_batch.sql where a row stays held; remaining rows by compiled/backfill_remaining.sql
              nice ratio 0: no pause between batches
              target batch time 50ms: the batch size grows and shrinks so that each batch takes about that
            """))
    }
}
