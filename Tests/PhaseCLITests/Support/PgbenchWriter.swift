import CutoverTestSupport
import EphemeralPostgres
import Foundation
import Testing

/// An application writing with plain SQL: pgbench running one script until told to stop.
///
/// It runs as a timed run longer than any test needs (`-T 170`, below the tests' 3-minute
/// limit, so that a writer a failed test never stopped ends by itself), and ``stop()`` ends it
/// the way a timed run ends, with SIGALRM: pgbench then finishes its clients and prints its
/// summary. Any error a statement gets aborts that client, which pgbench reports on stderr and
/// in its exit status; ``Finished/problems`` collects both.
struct PgbenchWriter: Sendable {
    /// What a stopped writer reported.
    struct Finished: Sendable {
        var status: Int32
        /// Scripts run to the end.
        var transactions: Int
        var output: String
        var diagnostics: String

        /// Every sign of a failed statement: a non-zero exit, an aborted client, a failed
        /// transaction, an error line. Empty when the writer never got an error.
        var problems: [String] {
            var found: [String] = []
            if status != 0 { found.append("exit status \(status)") }
            let failed = output.split(separator: "\n").first { $0.hasPrefix("number of failed transactions:") }
            if let failed, !failed.hasPrefix("number of failed transactions: 0 ") { found.append(String(failed)) }
            if failed == nil { found.append("no summary printed") }
            found += diagnostics.split(separator: "\n").filter { $0.contains("aborted") || $0.contains("ERROR") }.map(String.init)
            return found
        }
    }

    let pid: pid_t
    let name: String
    private let folder: URL

    /// Starts pgbench on `script` against `url` with `application_name` set to `name`.
    ///
    /// - Parameters:
    ///   - variables: pgbench variables (`-D name=value`).
    ///   - rate: transactions per second, for all clients together, so that the writers of
    ///     several tests running at once leave the machine some room.
    static func start(_ name: String, script: String, url: String, variables: [String: String],
                      clients: Int = 2, rate: Int = 40) throws -> PgbenchWriter {
        let folder = TestScratch.url("pgbench-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let scriptFile = folder.appendingPathComponent("script.sql")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        var arguments = [try executable(), "-n", "-c", String(clients), "-j", "1", "-T", "170", "-R", String(rate),
                         "-f", scriptFile.path]
        for (key, value) in variables.sorted(by: { $0.key < $1.key }) { arguments += ["-D", "\(key)=\(value)"] }
        arguments.append(url)
        var environment = ProcessInfo.processInfo.environment
        environment["PGAPPNAME"] = name
        let pid = try ChildProcess.spawn(arguments, environment: environment, output: folder.appendingPathComponent("stdout").path,
                                         errorOutput: folder.appendingPathComponent("stderr").path)
        return PgbenchWriter(pid: pid, name: name, folder: folder)
    }

    /// The clients that have aborted so far on an error, as pgbench reported them on stderr.
    func abortedClients() throws -> [String] {
        try String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)
            .split(separator: "\n").filter { $0.contains("aborted") }.map(String.init)
    }

    /// Ends the run as its timer would, waits for pgbench and returns what it reported.
    func stop() async throws -> Finished {
        let pid = pid
        let folder = folder
        return try await onThread {
            kill(pid, SIGALRM)
            var status = try ChildProcess.wait(for: pid, within: .seconds(60))
            if status == nil {
                kill(pid, SIGKILL)
                status = try ChildProcess.wait(for: pid)
                Issue.record("pgbench \(pid) did not stop within 60 s of SIGALRM; killed")
            }
            let output = try String(contentsOf: folder.appendingPathComponent("stdout"), encoding: .utf8)
            let diagnostics = try String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)
            try FileManager.default.removeItem(at: folder)
            let processed = output.split(separator: "\n").first { $0.hasPrefix("number of transactions actually processed:") }
            let transactions = processed.flatMap { Int($0.split(separator: " ").last.map(String.init) ?? "") } ?? 0
            return Finished(status: status ?? -1, transactions: transactions, output: output, diagnostics: diagnostics)
        }
    }

    /// Stops the writer and records an issue for every error it got; returns its transactions.
    @discardableResult
    func stopExpectingNoError(_ context: String) async throws -> Int {
        let finished = try await stop()
        #expect(finished.problems.isEmpty, "\(name) \(context): \(finished.problems.joined(separator: " | "))")
        #expect(finished.transactions > 0, "\(name) \(context): no transaction processed")
        return finished.transactions
    }

    /// pgbench: the test servers' own, else the newest under /usr/lib/postgresql (a client of
    /// any major speaks to every server).
    static func executable() throws -> String {
        let candidates = PostgresTools.searchFolders().map { $0 + "/pgbench" }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "pgbench was not found (looked at \(candidates)); install the postgresql package")
    }
}
