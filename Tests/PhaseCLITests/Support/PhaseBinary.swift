import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// Runs the built `phase` executable, as an operator would.
struct PhaseBinary {
    struct Run: Sendable {
        var status: Int32
        var output: String
        var diagnostics: String
    }

    /// The executable `product` (`phase`, `cutover-bench`) beside the test bundle, built with the package.
    static func path(of product: String = "phase") throws -> String {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [folder.appendingPathComponent(product).path]
        // The test bundle may sit one level deeper than the products.
        candidates.append(folder.deletingLastPathComponent().appendingPathComponent(product).path)
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "the \(product) executable was not built beside the tests (looked at \(candidates))")
    }

    /// Runs `phase` (or another of the package's executables) with `arguments` and waits for it.
    static func run(_ arguments: [String], product: String = "phase", databaseURL: String? = nil,
                    environment extra: [String: String] = [:]) throws -> Run {
        let process = try start(arguments, product: product, databaseURL: databaseURL, environment: extra)
        return try finish(process)
    }

    /// A `phase` process started but not waited for; finish it with ``finish(_:)``.
    struct Started: Sendable {
        /// The child's process ID.
        let pid: pid_t
        let output: URL
        let diagnostics: URL
    }

    static func start(_ arguments: [String], product: String = "phase", databaseURL: String? = nil,
                      environment extra: [String: String] = [:]) throws -> Started {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        environment["NO_COLOR"] = "1"
        // The binary waits 10 s to connect by default; a loaded test machine may need longer.
        environment["PGCONNECT_TIMEOUT"] = environment["PGCONNECT_TIMEOUT"] ?? String(TestPostgres.connectTimeout.components.seconds)
        // Tests of everything but the rehearsal gate run expand and contract without a rehearsal,
        // as an operator's --skip-rehearsal would; the gate's own tests (RehearseCommandTests) and
        // the runbooks set it to "" and go through `phase rehearse`.
        environment["CUTOVER_SKIP_REHEARSAL"] = environment["CUTOVER_SKIP_REHEARSAL"] ?? "1"
        for (key, value) in extra { environment[key] = value }
        let folder = TestScratch.url("phase-run")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("stdout")
        let diagnostics = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: diagnostics.path, contents: nil)
        let pid = try ChildProcess.spawn([try path(of: product)] + arguments, environment: environment, output: output.path,
                                         errorOutput: diagnostics.path)
        return Started(pid: pid, output: output, diagnostics: diagnostics)
    }

    /// Waits for the child, killing it after `limit` so that a hung child fails the test
    /// instead of hanging the run. The default is below the tests' 3-minute limit, so that a
    /// hung child is reported with what it printed.
    static func finish(_ started: Started, limit: Duration = .seconds(150)) throws -> Run {
        var status = try ChildProcess.wait(for: started.pid, within: limit)
        if status == nil {
            kill(started.pid, SIGKILL)
            _ = try ChildProcess.wait(for: started.pid)
            let printed = (try? String(contentsOf: started.diagnostics, encoding: .utf8)) ?? ""
            Issue.record("phase \(started.pid) did not finish within \(limit); killed. It printed:\n\(printed)")
            status = 128 + SIGKILL
        }
        let run = Run(status: status ?? -1,
                      output: try String(contentsOf: started.output, encoding: .utf8),
                      diagnostics: try String(contentsOf: started.diagnostics, encoding: .utf8))
        try? FileManager.default.removeItem(at: started.output.deletingLastPathComponent())
        return run
    }
}
