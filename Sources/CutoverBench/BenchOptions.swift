import CommandLineKit
import Foundation
import PhaseCLI
import PostgresClient

/// What one run of the benchmark does: which scenarios, how long, against which server.
///
/// Its command line is declared once in ``spec``, which parses it and writes `--help`.
struct BenchOptions: Sendable {
    /// The scenarios, in the order they run.
    enum Scenario: String, Sendable, CaseIterable {
        case saves
        case backfill
        case fleet
        case legacyWrites = "legacy-writes"
    }

    /// Where the save scenarios' client tasks run.
    enum ClientExecutor: String, Sendable, CaseIterable {
        /// On the pool's task executor, the threads that read the answers
        /// (``PostgresPool/taskExecutor``), as the pool recommends for tasks that mostly save.
        case pool
        /// On Swift's cooperative threads, as any task does by default.
        case cooperative
    }

    /// How long and how large a run is: a full run's and a quick one's, which options given on
    /// the command line override.
    struct Lengths: Sendable {
        /// Rounds of each save comparison; every round runs ours and each baseline once.
        var rounds: Int
        /// Length of each timed save run.
        var seconds: Int
        /// Length of each warm-up run.
        var warmUpSeconds: Int
        /// Rows of the backfill table, and the smaller size that shows memory does not grow with it.
        var backfillRows: Int
        var smallBackfillRows: Int
        /// The larger size, backfilled once, that shows the cost grows linearly and memory does
        /// not grow; 0 leaves it out.
        var largeBackfillRows: Int
        /// Rounds of the backfill comparison; an odd number, so that one round's noise does not
        /// decide its median.
        var backfillRounds: Int
        /// Fleet switches observed.
        var switches: Int
        /// Rows of each plan's table, and rounds, of the old application's writes before and after expand.
        var legacyWriteRows: Int
        var legacyWriteRounds: Int

        static let full = Lengths(rounds: 5, seconds: 8, warmUpSeconds: 2, backfillRows: 1_000_000, smallBackfillRows: 100_000,
                                 largeBackfillRows: 10_000_000, backfillRounds: 3, switches: 200, legacyWriteRows: 100_000,
                                 legacyWriteRounds: 3)
        static let quick = Lengths(rounds: 2, seconds: 3, warmUpSeconds: 1, backfillRows: 100_000, smallBackfillRows: 25_000,
                                  largeBackfillRows: 0, backfillRounds: 1, switches: 50, legacyWriteRows: 20_000, legacyWriteRounds: 1)
    }

    // MARK: The command line

    static let quick = Flag("quick", help: "A short run (under 3 minutes on 2 cores; smaller backfill table).")
    static let only = Option("only", type: .commaSeparated(.choice(Scenario.self)), default: Scenario.allCases,
                             valueName: "list", help: "Scenarios to run, comma-separated.")
    static let databaseURL = Option(
        "database-url", type: .string, valueName: "url",
        help: "Use this server (a postgresql:// URI; its role needs CREATEDB). Databases named cutover_bench_* are created and dropped there.")
    static let clients = Option("clients", type: .commaSeparated(.integer(in: 1...200)), default: [1, 8, 32],
                                valueName: "list", help: "Clients of the save scenarios, comma-separated.")
    static let rounds = Option("rounds", type: .integer(atLeast: 1), valueName: "n",
                               help: "Rounds of each save comparison; \(Lengths.full.rounds), or \(Lengths.quick.rounds) with --quick, when omitted.")
    static let seconds = Option("seconds", type: .integer(atLeast: 1), valueName: "n",
                                help: "Seconds of each timed save run; \(Lengths.full.seconds), or \(Lengths.quick.seconds) with --quick, when omitted.")
    static let backfillRows = Option(
        "backfill-rows", type: .integer(atLeast: 1000), valueName: "n",
        help: "Rows of the backfill table; \(Lengths.full.backfillRows), or \(Lengths.quick.backfillRows) with --quick, when omitted.")
    static let largeBackfillRows = Option(
        "large-backfill-rows", type: .integer(atLeast: 0), valueName: "n",
        help: "The larger size, backfilled once beside the first size's runs, for throughput and peak memory at scale; "
            + "\(Lengths.full.largeBackfillRows), or none with --quick, when omitted; 0 leaves it out.")
    static let smallBackfillRows = Option(
        "small-backfill-rows", type: .integer(atLeast: 1000), valueName: "n",
        help: "The second size, for peak memory; \(Lengths.full.smallBackfillRows), or \(Lengths.quick.smallBackfillRows) with --quick, when omitted.")
    static let backfillRounds = Option(
        "backfill-rounds", type: .integer(atLeast: 1), valueName: "n",
        help: "Rounds of the backfill comparison, each a backfill and one UPDATE of a fresh table; \(Lengths.full.backfillRounds), or \(Lengths.quick.backfillRounds) with --quick, when omitted.")
    static let backfillBatchSize = Option("backfill-batch-size", type: .integer(atLeast: 1), valueName: "n",
                                          help: "Rows of every backfill batch, fixed, instead of batches sized to the target batch time.")
    static let backfillTargetBatchTime = Option(
        "backfill-target-batch-time", type: .duration(in: .milliseconds(1) ... .seconds(60)), valueName: "duration",
        help: "The time each backfill batch's size aims at, instead of the plan's (50ms).")
    static let backfillWorkers = Option("backfill-workers", type: .integer(in: 1...64), default: 1, valueName: "n",
                                        help: "Backfill workers converting at once, each over its own key range, sharing one pace: one batch size, one check of the ceilings at a time, each resting by the nice ratio after its own batches.")
    static let backfillNiceRatio = Option(
        "backfill-nice-ratio", type: .decimal(in: 0...100), valueName: "ratio",
        help: "The backfill's pause after each batch, as a fraction of the batch's time, instead of the plan's (0: no rest).")
    static let switches = Option("switches", type: .integer(atLeast: 1), valueName: "n",
                                 help: "Fleet switches to observe; \(Lengths.full.switches), or \(Lengths.quick.switches) with --quick, when omitted.")
    static let legacyWriteRows = Option(
        "legacy-write-rows", type: .integer(atLeast: 100), valueName: "n",
        help: "Rows of each plan's table for the old application's writes; \(Lengths.full.legacyWriteRows), or \(Lengths.quick.legacyWriteRows) with --quick, when omitted.")
    static let json = Option("json", type: .string, valueName: "path", help: "Also write the JSON report to this file.")
    static let scripts = Option("scripts", type: .string, valueName: "dir",
                                help: "The pgbench scripts; the repository's Benchmarks/ when omitted.")
    static let pgbench = Option("pgbench", type: .string, valueName: "path",
                                help: "The pgbench program; found on PATH, then under /usr/lib/postgresql/*/bin, when omitted.")
    static let clientExecutor = Option(
        "client-executor", type: .choice(ClientExecutor.self), default: .pool, valueName: "executor",
        help: "Where our save clients run: pool (the pool's task executor, the threads that read the answers) or cooperative (Swift's cooperative threads, a task's default).")
    static let statements = Option(
        "statements", type: .choice(["unnamed": PostgresConfiguration.PreparedStatements.unnamed, "prepared": .perConnection]),
        default: .perConnection, valueName: "kind",
        help: "How both sides of the save scenarios send statements: prepared (once per connection; pgbench -M prepared) or unnamed (the library's default, safe through any pooler; pgbench -M extended).")

    /// The benchmark's command line, for parsing and help.
    static let spec = CommandSpec(
        "cutover-bench",
        abstract: "Benchmarks Cutover's save, backfill, fleet switch and the old application's writes during a migration beside pgbench baselines.",
        discussion: "Starts an ephemeral PostgreSQL cluster (fsync on) unless --database-url is given, warms up, runs every scenario and its baseline in alternation, and prints a table and JSON.",
        parameters: [quick, only, databaseURL, clients, rounds, seconds, backfillRows, smallBackfillRows, largeBackfillRows, backfillRounds,
                     backfillBatchSize, backfillTargetBatchTime, backfillNiceRatio, backfillWorkers, switches, legacyWriteRows, json, scripts, pgbench, clientExecutor, statements])

    // MARK: The values

    /// A server to use instead of an ephemeral cluster (its role needs CREATEDB).
    var databaseURL: String?
    /// The short run: fewer rounds, shorter windows, a smaller backfill table.
    var isQuick: Bool
    var scenarios: [Scenario]
    /// Concurrent clients of the save scenarios.
    var clientCounts: [Int]
    /// How long and how large the run is.
    var lengths: Lengths
    /// The engine's pace instead of the plan's, to measure another one.
    var backfillBatchSize: Int?
    var backfillTargetBatchTime: Duration?
    var backfillNiceRatio: Double?
    var backfillWorkers: Int
    /// Listeners in the fleet.
    var listeners = 16
    /// Where to write the JSON report as well as printing it.
    var jsonPath: String?
    /// The folder of pgbench scripts (the repository's `Benchmarks/`).
    var scriptsDirectory: String
    /// The pgbench program; found on PATH or under /usr/lib/postgresql/*/bin when nil.
    var pgbenchPath: String?
    /// Where our side's save clients run between their awaits.
    var clientExecutor: ClientExecutor
    /// How both sides of the save scenarios send statements: prepared once per connection (as
    /// an application connected directly would, and pgbench's `-M prepared`), or unnamed (the
    /// library's default, for poolers; pgbench's `-M extended`).
    var preparedStatements: PostgresConfiguration.PreparedStatements

    /// The options `parsed` holds; `--quick` chooses the lengths that the others override.
    init(_ parsed: ParsedCommand) {
        isQuick = parsed[Self.quick]
        lengths = isQuick ? .quick : .full
        databaseURL = parsed[Self.databaseURL]
        scenarios = parsed[Self.only]
        clientCounts = parsed[Self.clients]
        if let rounds = parsed[Self.rounds] { lengths.rounds = rounds }
        if let seconds = parsed[Self.seconds] { lengths.seconds = seconds }
        if let rows = parsed[Self.backfillRows] { lengths.backfillRows = rows }
        if let rows = parsed[Self.smallBackfillRows] { lengths.smallBackfillRows = rows }
        if let rows = parsed[Self.largeBackfillRows] { lengths.largeBackfillRows = rows }
        if let rounds = parsed[Self.backfillRounds] { lengths.backfillRounds = rounds }
        if let switches = parsed[Self.switches] { lengths.switches = switches }
        if let rows = parsed[Self.legacyWriteRows] { lengths.legacyWriteRows = rows }
        backfillBatchSize = parsed[Self.backfillBatchSize]
        backfillNiceRatio = parsed[Self.backfillNiceRatio]
        backfillTargetBatchTime = parsed[Self.backfillTargetBatchTime]
        backfillWorkers = parsed[Self.backfillWorkers]
        jsonPath = parsed[Self.json]
        scriptsDirectory = parsed[Self.scripts] ?? Self.defaultScriptsDirectory
        pgbenchPath = parsed[Self.pgbench]
        clientExecutor = parsed[Self.clientExecutor]
        preparedStatements = parsed[Self.statements]
    }

    /// `Benchmarks/` beside `Sources/`, found from this file's place in the repository.
    static var defaultScriptsDirectory: String {
        repositoryRoot.appendingPathComponent("Benchmarks").path
    }

    /// The repository this file is in: where `Benchmarks/` and `examples/` are.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
