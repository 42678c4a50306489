import CutoverTestSupport
@testable import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// Which PostgreSQL installation the ephemeral cluster runs: `CUTOVER_PG_BINDIR`, then PATH,
/// then `/usr/lib/postgresql/*/bin`.
@Suite("PostgreSQL server programs")
struct PostgresToolsTests {
    /// A new folder holding empty runnable files with these names.
    private func folder(with programs: [String]) throws -> String {
        let folder = TestScratch.url("cutover-bin").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for program in programs {
            #expect(FileManager.default.createFile(atPath: folder + "/" + program, contents: Data("#!/bin/sh\n".utf8),
                                                   attributes: [.posixPermissions: 0o755]))
        }
        return folder
    }

    @Test func theChosenFolderWinsOverPATH() throws {
        let real = try EphemeralCluster.locateBinDirectory()
        let chosen = try folder(with: ["initdb", "pg_ctl"])
        defer { try? FileManager.default.removeItem(atPath: chosen) }
        #expect(chosen != real)
        let found = try PostgresTools.locateFolder(environment: ["CUTOVER_PG_BINDIR": chosen, "PATH": real])
        #expect(found == chosen)
        // Unset or empty, PATH decides.
        #expect(try PostgresTools.locateFolder(environment: ["CUTOVER_PG_BINDIR": "", "PATH": real]) == real)
        #expect(try PostgresTools.locateFolder(environment: ["PATH": "\(chosen):\(real)"]) == chosen)
    }

    @Test func aFolderWithoutTheServerProgramsIsAnErrorNamingIt() throws {
        let missing = "/nonexistent/cutover-\(UUID().uuidString)/bin"
        let lacking = try folder(with: ["initdb"])
        defer { try? FileManager.default.removeItem(atPath: lacking) }
        for (folder, absent) in [(missing, "initdb or pg_ctl"), (lacking, "pg_ctl")] {
            let error = #expect(throws: EphemeralClusterError.self) {
                try PostgresTools.locateFolder(environment: ["CUTOVER_PG_BINDIR": folder, "PATH": "/usr/bin"])
            }
            let message = error?.message ?? ""
            #expect(message.hasPrefix("CUTOVER_PG_BINDIR=\(folder) is no folder of PostgreSQL server programs"), "\(message)")
            #expect(message.contains("no runnable \(absent) "), "\(message)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func theClusterRunsTheServerOfItsBinDirectory() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        #expect(cluster.binDirectory == (try EphemeralCluster.locateBinDirectory()))
        let serverVersion = try await onThread {
            try PostgresConnection(configuration: cluster.configuration()).serverVersion
        }
        // `postgres --version` of that folder says the major the server reports.
        // (posix_spawn and waitpid: Foundation's Process can miss a child's exit on Linux.)
        let file = TestScratch.url("postgres-version").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let status = try await onThread { try ChildProcess.run([cluster.binDirectory + "/postgres", "--version"], output: file) }
        #expect(status == 0)
        let output = try String(contentsOfFile: file, encoding: .utf8)
        #expect(output.hasPrefix("postgres (PostgreSQL) \(serverVersion / 10_000)."), "\(output)")
    }
}
