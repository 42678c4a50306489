import CommandLineKit
import Foundation
import PostgresClient

/// The benchmark's command line: options, the server, the scenarios, the report.
enum BenchProgram {
    /// Runs the benchmark and returns the exit code: 0 done, 1 failed, 64 usage.
    static func run(_ arguments: [String]) async -> Int32 {
        let options: BenchOptions
        switch CommandLineParser(root: BenchOptions.spec).parse(arguments) {
        case .help(let text):
            print(text, terminator: "")
            return 0
        case .usageError(let error):
            FileHandle.standardError.write(Data(error.text.utf8))
            return 64
        case .command(let parsed):
            options = BenchOptions(parsed)
        }
        let log = ProgressLog()
        var server: BenchServer?
        do {
            let pgbench = try Pgbench.locate(path: options.pgbenchPath, scriptsDirectory: options.scriptsDirectory)
            log.step(options.databaseURL == nil ? "starting an ephemeral PostgreSQL cluster (durable settings)"
                                                : "using the server of --database-url")
            let started = try await BenchServer.start(databaseURL: options.databaseURL)
            server = started
            let report = try await measure(options: options, server: started, pgbench: pgbench, log: log)
            started.stop()
            print(report.table)
            print()
            let json = try report.json()
            print(json)
            if let path = options.jsonPath { try (json + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
            return 0
        } catch {
            server?.stop()
            FileHandle.standardError.write(Data("Error: \(PasswordRedaction.redact("\(error)"))\n".utf8))
            return 1
        }
    }

    private static func measure(options: BenchOptions, server: BenchServer, pgbench: Pgbench,
                                log: ProgressLog) async throws -> BenchReport {
        let startedAt = ISO8601DateFormatter().string(from: Date())
        let version = try await runOnDedicatedThread {
            try PostgresConnection(configuration: .init(connectionString: server.adminURL))
                .query("SELECT version() AS v")[0].decode(String.self, "v")
        }
        var results: [ScenarioResult] = []
        for scenario in options.scenarios {
            switch scenario {
            case .saves:
                results += try await SaveScenario(server: server, pgbench: pgbench, options: options, log: log).run()
            case .backfill:
                results += try await BackfillScenario(server: server, pgbench: pgbench, options: options, log: log).run()
            case .fleet:
                results += try await FleetSwitchScenario(server: server, options: options, log: log).run()
            case .legacyWrites:
                results += try await LegacyWritesScenario(server: server, pgbench: pgbench, options: options, log: log).run()
            }
        }
        return BenchReport(mode: options.isQuick ? "quick" : "full", startedAt: startedAt,
                           machine: .current(server: server.description, postgres: version), scenarios: results)
    }
}
