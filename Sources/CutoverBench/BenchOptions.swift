import Foundation
import PostgresClient

/// What one run of the benchmark does: which scenarios, how long, against which server.
struct BenchOptions: Sendable {
    /// The scenarios, in the order they run.
    enum Scenario: String, Sendable, CaseIterable {
        case saves
        case backfill
        case fleet
    }

    /// A server to use instead of an ephemeral cluster (its role needs CREATEDB).
    var databaseURL: String?
    /// The short run: fewer rounds, shorter windows, a smaller backfill table.
    var isQuick = false
    var scenarios: [Scenario] = Scenario.allCases
    /// Concurrent clients of the save scenarios.
    var clientCounts = [1, 8, 32]
    /// Rounds of each save comparison; every round runs ours and each baseline once.
    var rounds = 5
    /// Length of each timed save run.
    var seconds = 8
    /// Length of each warm-up run.
    var warmUpSeconds = 2
    /// Rows of the backfill table, and the smaller size that shows memory does not grow with it.
    var backfillRows = 1_000_000
    var smallBackfillRows = 100_000
    /// Rounds of the backfill comparison.
    var backfillRounds = 2
    /// The engine's pace instead of the plan's, to measure another one.
    var backfillBatchSize: Int?
    var backfillNiceRatio: Double?
    /// Fleet switches observed.
    var switches = 200
    /// Listeners in the fleet.
    var listeners = 16
    /// Where to write the JSON report as well as printing it.
    var jsonPath: String?
    /// The folder of pgbench scripts (the repository's `Benchmarks/`).
    var scriptsDirectory = BenchOptions.defaultScriptsDirectory
    /// The pgbench program; found on PATH or under /usr/lib/postgresql/*/bin when nil.
    var pgbenchPath: String?
    /// Where our side's save clients run between their awaits.
    var clientExecutor = ClientExecutor.pool
    /// How our side's connections send statements: unnamed (the library's default) or
    /// prepared once per connection, to measure what preparing saves.
    var preparedStatements = PostgresConfiguration.PreparedStatements.unnamed

    /// Where the save scenarios' client tasks run.
    enum ClientExecutor: String, Sendable {
        /// On the pool's task executor, the threads that read the answers
        /// (``PostgresPool/taskExecutor``), as the pool recommends for tasks that mostly save.
        case pool
        /// On Swift's cooperative threads, as any task does by default.
        case cooperative
    }

    static let quick: BenchOptions = {
        var options = BenchOptions()
        options.isQuick = true
        options.rounds = 2
        options.seconds = 3
        options.warmUpSeconds = 1
        options.backfillRows = 100_000
        options.smallBackfillRows = 25_000
        options.backfillRounds = 1
        options.switches = 50
        return options
    }()

    /// `Benchmarks/` beside `Sources/`, found from this file's place in the repository.
    static var defaultScriptsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks").path
    }

    static let usage = """
        OVERVIEW: Benchmarks Cutover's save, backfill and fleet switch beside pgbench baselines.

        Starts an ephemeral PostgreSQL cluster (fsync on) unless --database-url is given, warms
        up, runs every scenario and its baseline in alternation, and prints a table and JSON.

        USAGE: cutover-bench [--quick] [--only LIST] [--database-url URL] [options]

        OPTIONS:
          --quick                 A short run (under 3 minutes on 2 cores; smaller backfill table).
          --only LIST             Scenarios to run, comma-separated: saves, backfill, fleet.
          --database-url URL      Use this server (a postgresql:// URI; its role needs CREATEDB).
                                  Databases named cutover_bench_* are created and dropped there.
          --clients LIST          Clients of the save scenarios (default 1,8,32).
          --rounds N              Rounds of each save comparison (default 5; quick 2).
          --seconds N             Seconds of each timed save run (default 8; quick 3).
          --backfill-rows N       Rows of the backfill table (default 1000000; quick 100000).
          --small-backfill-rows N The second size, for peak memory (default 100000; quick 25000).
          --backfill-batch-size N Rows per backfill batch instead of the plan's (1000).
          --backfill-nice-ratio X The backfill's pause after each batch, as a fraction of the
                                  batch's time, instead of the plan's (0.25).
          --switches N            Fleet switches to observe (default 200; quick 50).
          --json PATH             Also write the JSON report to PATH.
          --scripts DIR           The pgbench scripts (default: the repository's Benchmarks/).
          --pgbench PATH          The pgbench program (default: PATH, then /usr/lib/postgresql/*/bin).
          --client-executor E     Where our save clients run: pool (default: the pool's task
                                  executor, the threads that read the answers) or cooperative
                                  (Swift's cooperative threads, a task's default).
          --statements S          How our save connections send statements: unnamed (default,
                                  safe through any pooler) or prepared (once per connection).
          -h, --help              Show this help.
        """

    /// Reads the command line; `--quick` sets the defaults that later options may override.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions {
        var options = arguments.contains("--quick") ? BenchOptions.quick : BenchOptions()
        var remaining = arguments[...]
        func value(of option: String) throws(BenchUsageError) -> String {
            guard let value = remaining.popFirst() else { throw BenchUsageError("\(option) needs a value") }
            return value
        }
        func number(of option: String, atLeast minimum: Int = 1) throws(BenchUsageError) -> Int {
            let text = try value(of: option)
            guard let number = Int(text.replacing("_", with: "")), number >= minimum else {
                throw BenchUsageError("\(option) needs a whole number of at least \(minimum), not '\(text)'")
            }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick": break
            case "--only":
                let names = try value(of: argument).split(separator: ",").map(String.init)
                options.scenarios = try names.map { name throws(BenchUsageError) in
                    guard let scenario = Scenario(rawValue: name) else {
                        throw BenchUsageError("unknown scenario '\(name)'; choose from saves, backfill, fleet")
                    }
                    return scenario
                }
            case "--database-url": options.databaseURL = try value(of: argument)
            case "--clients":
                let text = try value(of: argument)
                let counts = text.split(separator: ",").compactMap { Int($0) }
                guard !counts.isEmpty, counts.allSatisfy({ $0 >= 1 && $0 <= 200 }) else {
                    throw BenchUsageError("--clients needs numbers from 1 to 200, comma-separated, not '\(text)'")
                }
                options.clientCounts = counts
            case "--rounds": options.rounds = try number(of: argument)
            case "--seconds": options.seconds = try number(of: argument)
            case "--backfill-rows": options.backfillRows = try number(of: argument, atLeast: 1000)
            case "--small-backfill-rows": options.smallBackfillRows = try number(of: argument, atLeast: 1000)
            case "--backfill-batch-size": options.backfillBatchSize = try number(of: argument)
            case "--backfill-nice-ratio":
                let text = try value(of: argument)
                guard let ratio = Double(text), ratio >= 0, ratio <= 100 else {
                    throw BenchUsageError("--backfill-nice-ratio needs a number from 0 to 100, not '\(text)'")
                }
                options.backfillNiceRatio = ratio
            case "--switches": options.switches = try number(of: argument)
            case "--json": options.jsonPath = try value(of: argument)
            case "--scripts": options.scriptsDirectory = try value(of: argument)
            case "--pgbench": options.pgbenchPath = try value(of: argument)
            case "--client-executor":
                let text = try value(of: argument)
                guard let executor = ClientExecutor(rawValue: text) else {
                    throw BenchUsageError("--client-executor is pool or cooperative, not '\(text)'")
                }
                options.clientExecutor = executor
            case "--statements":
                let text = try value(of: argument)
                switch text {
                case "unnamed": options.preparedStatements = .unnamed
                case "prepared": options.preparedStatements = .perConnection
                default: throw BenchUsageError("--statements is unnamed or prepared, not '\(text)'")
                }
            default: throw BenchUsageError("unknown option '\(argument)'")
            }
        }
        return options
    }
}

/// A command line the benchmark cannot run.
struct BenchUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
