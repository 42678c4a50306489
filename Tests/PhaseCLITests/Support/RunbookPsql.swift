import Foundation
import Testing

/// psql, which the runbooks' SQL is written for: its output is what an operator sees.
enum RunbookPsql {
    /// psql on PATH, else in the newest `/usr/lib/postgresql/*/bin`.
    static var path: String {
        get throws {
            var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .compactMap(Int.init).sorted(by: >)
            folders += versions.map { "/usr/lib/postgresql/\($0)/bin" }
            let found = folders.map { $0 + "/psql" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            return try #require(found, "the runbooks' SQL runs through psql, which is not installed (apt-get install postgresql-client)")
        }
    }

    /// Runs `script` as `psql -X -v ON_ERROR_STOP=1 -f file` against `databaseURL`.
    static func run(_ script: String, databaseURL: String) throws -> PhaseBinary.Run {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runbook-psql-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("script.sql")
        try script.write(to: input, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("stdout")
        let diagnostics = folder.appendingPathComponent("stderr")
        for file in [output, diagnostics] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path)
        process.arguments = ["-X", "-v", "ON_ERROR_STOP=1", "-d", databaseURL, "-f", input.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: diagnostics)
        try process.run()
        process.waitUntilExit()
        return PhaseBinary.Run(status: process.terminationStatus, output: try String(contentsOf: output, encoding: .utf8),
                               diagnostics: try String(contentsOf: diagnostics, encoding: .utf8))
    }
}
