import EphemeralPostgres
import Foundation
import PostgresClient

/// PostgreSQL's pgbench, driving a baseline from a script of the repository's `Benchmarks/`.
///
/// Every run uses `-n` (no vacuum) and `-M prepared` unless told to send its statements
/// unprepared, and logs each transaction's latency (`-l`), from which the percentiles come.
struct Pgbench: Sendable {
    /// The pgbench program.
    let executable: String
    /// The folder of scripts.
    let scriptsDirectory: String

    /// How pgbench sends its statements (its `-M`).
    enum QueryMode: String, Sendable {
        /// Each statement prepared once per connection and run by name (`-M prepared`).
        case prepared
        /// Each statement parsed, bound and run in one go as the unnamed statement
        /// (`-M extended`), as the library sends it by default.
        case extended
    }

    /// One finished pgbench run.
    struct Run: Sendable {
        /// Transactions processed.
        var transactions: Int
        /// Transactions per second, without the initial connection time (as pgbench reports it).
        var tps: Double
        /// Every transaction's latency.
        var latencies: Latencies
        /// The run's length as asked for (or as logged, for a count of transactions).
        var duration: Duration
        /// CPU time pgbench itself used.
        var cpu: Duration
    }

    /// Finds pgbench at `path`, on PATH, or under the newest `/usr/lib/postgresql/*/bin`.
    static func locate(path: String?, scriptsDirectory: String) throws -> Pgbench {
        let candidates = (path.map { [$0] } ?? []) + PostgresTools.searchFolders().map { $0 + "/pgbench" }
        guard let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchError("pgbench was not found (install the postgresql package, or give --pgbench PATH)")
        }
        guard FileManager.default.fileExists(atPath: scriptsDirectory + "/save_textbook.sql") else {
            throw BenchError("the pgbench scripts are not in \(scriptsDirectory) (give --scripts DIR, the repository's Benchmarks/)")
        }
        return Pgbench(executable: found, scriptsDirectory: scriptsDirectory)
    }

    /// Runs `script` with `clients` clients for `seconds` (or for `transactions` per client).
    ///
    /// - Parameters:
    ///   - variables: pgbench variables (`-D name=value`), the same for every client.
    ///   - names: for each placeholder `@name@` of the script, the SQL name written in its place
    ///     (pgbench variables are values, never names).
    func run(script: String, target: (connectionString: String, environment: [String: String]),
             clients: Int, seconds: Int? = nil, transactions: Int? = nil,
             variables: [(String, String)] = [], names: [(String, String)] = [], mode: QueryMode = .prepared) async throws -> Run {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cutover-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var scriptPath = scriptsDirectory + "/" + script
        if !names.isEmpty {
            var text = try String(contentsOfFile: scriptPath, encoding: .utf8)
            for (placeholder, name) in names { text = text.replacingOccurrences(of: "@\(placeholder)@", with: name) }
            scriptPath = folder + "/" + script
            try text.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        }
        var arguments = ["-n", "-M", mode.rawValue, "-c", String(clients), "-j", String(min(clients, Self.threads)),
                         "-l", "--log-prefix=\(folder)/tx", "-f", scriptPath]
        if let seconds { arguments += ["-T", String(seconds)] }
        if let transactions { arguments += ["-t", String(transactions)] }
        for (name, value) in variables { arguments += ["-D", "\(name)=\(value)"] }
        arguments.append(target.connectionString)
        let output = folder + "/output"
        let ended = try await Self.execute(executable, arguments, environment: target.environment, output: output)
        let status = ended.status
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0, !text.contains("aborted"), let processed = Self.number(after: "actually processed: ", in: text),
              let tps = Self.number(after: "tps = ", in: text) else {
            let lines = text.split(separator: "\n")
            let errors = lines.filter { $0.contains("error") || $0.contains("ERROR") }
            let tail = (errors.isEmpty ? lines.suffix(3) : errors.prefix(3))
            throw BenchError("pgbench \(script) failed (status \(status)): \(tail.joined(separator: " | "))")
        }
        if let failed = Self.number(after: "number of failed transactions: ", in: text), failed > 0 {
            throw BenchError("pgbench \(script): \(Int(failed)) transactions failed")
        }
        let latencies = try Self.loggedLatencies(in: folder)
        let duration: Duration = seconds.map { .seconds($0) }
            ?? .microseconds(Int64(latencies.values.reduce(0, +) * 1000))
        return Run(transactions: Int(processed), tps: tps, latencies: latencies, duration: duration, cpu: ended.cpuTime)
    }

    /// pgbench threads: one per core, never more than clients.
    static let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// The latencies of every transaction logged (`client tx latency_us script epoch us`).
    private static func loggedLatencies(in folder: String) throws -> Latencies {
        var milliseconds: [Double] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasPrefix("tx.") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count > 2, let micros = Double(fields[2]) { milliseconds.append(micros / 1000) }
            }
        }
        return Latencies(milliseconds: milliseconds)
    }

    private static func number(after label: String, in text: String) -> Double? {
        guard let range = text.range(of: label) else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    /// Runs a program to completion on a thread of its own; its output goes to `output`.
    /// Returns its exit status and the CPU time it used.
    ///
    /// Spawned by ``ChildProcess``, with an empty signal mask and default handlers: pgbench
    /// ends a timed run with SIGALRM, which a thread of this process may have blocked or
    /// ignored (Foundation's `Process` passes that on, and pgbench then never stops).
    private static func execute(_ program: String, _ arguments: [String], environment: [String: String],
                                output: String) async throws -> ChildProcess.Termination {
        try await runOnDedicatedThread(named: "cutover-bench-pgbench") {
            // A fresh output file: the child appends to it.
            try? FileManager.default.removeItem(atPath: output)
            let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            let pid = try ChildProcess.spawn([program] + arguments, environment: variables, output: output)
            return try ChildProcess.waitForTermination(of: pid)
        }
    }
}

/// Why the benchmark could not go on.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
