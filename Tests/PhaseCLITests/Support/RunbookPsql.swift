import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// psql, which the runbooks' SQL is written for: its output is what an operator sees.
enum RunbookPsql {
    /// psql on PATH, else in the newest `/usr/lib/postgresql/*/bin`.
    static var path: String {
        get throws {
            let found = PostgresTools.searchFolders().map { $0 + "/psql" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            return try #require(found, "the runbooks' SQL runs through psql, which is not installed (apt-get install postgresql-client)")
        }
    }

    /// Runs `script` as `psql -X -v ON_ERROR_STOP=1 -f file` against `databaseURL`.
    ///
    /// psql is started and reaped like the phase binary (posix_spawn and waitpid, bounded), not
    /// through Foundation's Process, whose wait on Linux can miss a child's exit and hang.
    static func run(_ script: String, databaseURL: String) throws -> PhaseBinary.Run {
        let folder = TestScratch.url("runbook-psql")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let input = folder.appendingPathComponent("script.sql")
        try script.write(to: input, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("stdout")
        let diagnostics = folder.appendingPathComponent("stderr")
        for file in [output, diagnostics] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let pid = try ChildProcess.spawn([try path, "-X", "-v", "ON_ERROR_STOP=1", "-d", databaseURL, "-f", input.path],
                                         output: output.path, errorOutput: diagnostics.path)
        // finish reads both files and removes their folder.
        return try PhaseBinary.finish(PhaseBinary.Started(pid: pid, output: output, diagnostics: diagnostics))
    }
}
