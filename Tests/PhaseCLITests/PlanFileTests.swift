import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// A plan folder is read for its regular files only, and never through a link that leaves it.
@Suite("Plan files", .timeLimit(.minutes(3)))
struct PlanFileTests {
    /// Runs `phase --plan FOLDER plan`, and `status` against a server that never answers, so
    /// that a command which got past the plan (and would send it) ends in a connect timeout.
    private func runBoth(_ folder: PlanFolder) async throws -> [PhaseBinary.Run] {
        let silent = try LoopbackSocket.silent()
        defer { withExtendedLifetime(silent) {} }
        let url = "host=127.0.0.1 port=\(silent.port) dbname=app user=app connect_timeout=5"
        return try await onThread {
            // A bounded wait, so that a hang fails the test instead of the run.
            [try PhaseBinary.finish(try PhaseBinary.start(["--plan", folder.path, "plan"]), limit: .seconds(60)),
             try PhaseBinary.finish(try PhaseBinary.start(["--plan", folder.path, "status"], databaseURL: url), limit: .seconds(60))]
        }
    }

    @Test("a FIFO in the plan is refused at once, naming it", arguments: ["plan.json", "expand.sql"])
    func aFIFOIsRefused(file: String) async throws {
        let folder = try PlanFolder.copyOfDrafts("fifo-plan")
        defer { folder.remove() }
        try FileManager.default.removeItem(atPath: folder.path(file))
        #expect(mkfifo(folder.path(file), 0o600) == 0)
        for run in try await runBoth(folder) {
            #expect(run.status == 64, "\(run.diagnostics)")
            #expect(run.diagnostics == "Error: \(folder.path(file)) is a FIFO, not a regular file: a plan reads regular files only\n")
            #expect(run.output == "")
        }
    }

    @Test func aLinkLeavingThePlanFolderIsRefusedAndNothingIsSent() async throws {
        let folder = try PlanFolder.copyOfDrafts("link-plan")
        defer { folder.remove() }
        try FileManager.default.removeItem(atPath: folder.path("expand.sql"))
        try FileManager.default.createSymbolicLink(atPath: folder.path("expand.sql"), withDestinationPath: "/etc/passwd")
        for run in try await runBoth(folder) {
            #expect(run.status == 64, "\(run.diagnostics)")
            #expect(run.diagnostics == "Error: \(folder.path("expand.sql")) is a link that leads outside the plan folder: a plan reads only its own files\n")
            #expect(!run.output.contains("root:"))
        }
    }

    @Test func aLinkWithinThePlanFolderIsFollowed() throws {
        let folder = try PlanFolder.copyOfDrafts("inner-link-plan")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("shared"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: folder.path("expand.sql"), toPath: folder.path("shared/expand.sql"))
        try FileManager.default.createSymbolicLink(atPath: folder.path("expand.sql"), withDestinationPath: "shared/expand.sql")
        let run = try PhaseBinary.run(["--plan", folder.path, "plan"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("apply expand.sql (in a transaction); locks: ACCESS EXCLUSIVE (alter table"))
    }

    @Test func aFolderWhereAFileShouldBeIsRefused() throws {
        let folder = try PlanFolder.copyOfDrafts("folder-plan")
        defer { folder.remove() }
        try FileManager.default.removeItem(atPath: folder.path("expand.sql"))
        try FileManager.default.createDirectory(atPath: folder.path("expand.sql"), withIntermediateDirectories: true)
        let run = try PhaseBinary.run(["--plan", folder.path, "plan"])
        #expect(run.status == 64)
        #expect(run.diagnostics == "Error: \(folder.path("expand.sql")) is a folder, not a regular file: a plan reads regular files only\n")
    }
}
