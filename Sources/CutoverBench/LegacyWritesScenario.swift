import Cutover
import CutoverPostgres
import Foundation
import PostgresClient

/// "old application's writes after expand, PLAN": what the migration window costs the old
/// application, which keeps writing the legacy columns with plain SQL while the plan's sync
/// trigger derives the modern ones ("trigger write amplification").
///
/// For the built-in drafts plan and every plan of `examples/`, pgbench runs the old
/// application's statements (`Benchmarks/legacy_writes/PLAN/write.sql`: an UPDATE of a random
/// row's legacy column and an INSERT, each committed on its own) on the plan's table before
/// expand and, in the same round, on the same table after expand, with the sync trigger in
/// place. Every run starts from a fresh table made from the plan's
/// own schema and filled alike, vacuumed, analysed and checkpointed; the rounds alternate which
/// side goes first. After each run after expand, every row the old application inserted must
/// have its modern columns filled by the trigger.
struct LegacyWritesScenario {
    let server: BenchServer
    let pgbench: Pgbench
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_legacy_writes"
    /// The old application's pgbench clients.
    static let clients = 4

    /// One plan the scenario measures: its source and the table it starts from.
    private struct Subject {
        var source: PlanSource
        var declaration: DeclarativePlan
        var schemaSQL: String

        var name: String { declaration.name }
        var table: String { declaration.table.description }
        var scripts: String { "legacy_writes/\(name)" }
    }

    func run() async throws -> [ScenarioResult] {
        let subjects = try Self.subjects()
        let database = try await BenchDatabase.create(Self.databaseName, on: server)
        try await database.sql { connection in try ControlSchema.install(on: connection) }
        var results: [ScenarioResult] = []
        if let first = subjects.first {
            // Unmeasured: the cluster's first WAL segments are created while commits wait.
            try await freshTable(first, expanded: false, in: database)
            log.step("legacy writes: warming up (\(options.lengths.warmUpSeconds) s before expand, \(first.name))")
            _ = try await writes(first, seconds: options.lengths.warmUpSeconds, in: database)
        }
        for subject in subjects {
            results.append(try await measure(subject, in: database))
        }
        await database.drop()
        return results
    }

    /// The drafts plan and every declarative plan of `examples/`, in name order.
    private static func subjects() throws -> [Subject] {
        var subjects: [Subject] = []
        let builtIn = try PlanSource.builtIn()
        guard let drafts = builtIn.compiled?.declaration else { throw BenchError("the built-in drafts plan is not declarative") }
        subjects.append(Subject(source: builtIn, declaration: drafts, schemaSQL: try SQLFiles.text("drafts/baseline.sql")))
        let examples = BenchOptions.repositoryRoot.appendingPathComponent("examples")
        let folders = try FileManager.default.contentsOfDirectory(atPath: examples.path).sorted()
        for folder in folders {
            let path = examples.appendingPathComponent(folder).path
            guard FileManager.default.fileExists(atPath: path + "/schema.sql") else { continue }
            let source = try PlanSource.folder(path)
            guard let declaration = source.compiled?.declaration else { continue }
            subjects.append(Subject(source: source, declaration: declaration,
                                    schemaSQL: try String(contentsOfFile: path + "/schema.sql", encoding: .utf8)))
        }
        return subjects
    }

    private func measure(_ subject: Subject, in database: BenchDatabase) async throws -> ScenarioResult {
        var before: [Pgbench.Run] = []
        var after: [Pgbench.Run] = []
        for round in 0..<options.lengths.legacyWriteRounds {
            for expanded in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                try await freshTable(subject, expanded: expanded, in: database)
                let run = try await writes(subject, seconds: options.lengths.seconds, in: database)
                if expanded {
                    let unsynced = try await database.sql { connection in
                        try connection.query(PostgresQuery(unsafeSQL: try script(subject, "unsynced.sql")))[0].decode(Int64.self, "n")
                    }
                    guard unsynced == 0 else {
                        throw BenchError("\(subject.name): \(unsynced) rows the old application inserted after expand have no modern columns")
                    }
                    after.append(run)
                } else {
                    before.append(run)
                }
                log.step("legacy writes, \(subject.name): \(expanded ? "after" : "before") expand \(Format.number(run.tps)) tx/s, p99 \(Format.milliseconds(run.latencies.percentile(0.99)))")
            }
        }
        var latencyAfter = Latencies()
        after.forEach { latencyAfter.append($0.latencies) }
        var latencyBefore = Latencies()
        before.forEach { latencyBefore.append($0.latencies) }
        let pairs = zip(after, before).map { ScenarioResult.Round(ours: $0.tps, baseline: $1.tps) }
        return ScenarioResult(
            scenario: "old application's writes after expand, \(subject.name)", unit: "tx/s", ours: median(after.map(\.tps)),
            baselineName: "the same writes before expand (pgbench \(subject.scripts)/write.sql)", baseline: median(before.map(\.tps)),
            ratio: median(pairs.map(\.ratio)), goal: .ratioAtLeast(0.85),
            latencyOurs: latencyAfter.summary, latencyBaseline: latencyBefore.summary,
            rows: after.map(\.transactions).reduce(0, +), duration: after.map(\.duration.seconds).reduce(0, +),
            rounds: pairs,
            settings: "durable commits; table \(subject.table) of \(Format.number(Double(options.lengths.legacyWriteRows))) rows, "
                + "fresh each run; \(Self.clients) pgbench clients, prepared statements; each transaction an UPDATE of a random row's "
                + "legacy column and an INSERT, each committed on its own",
            notes: ["ours: after expand (the sync trigger); baseline: the same table before expand"])
    }

    /// The plan's table made afresh and filled as the old application wrote it; expanded when asked.
    private func freshTable(_ subject: Subject, expanded: Bool, in database: BenchDatabase) async throws {
        let rows = options.lengths.legacyWriteRows
        let fill = try script(subject, "fill.sql")
        try await database.sql { connection in
            // CASCADE: the plan's row functions take the table's row type; expand makes them again.
            try connection.execute(unsafeSQL: "DROP TABLE IF EXISTS \(subject.table) CASCADE")
            try connection.execute(unsafeSQL: subject.schemaSQL)
            try connection.execute(unsafeSQL: "SET cutover_bench.rows = \(rows)")
            try connection.execute(unsafeSQL: fill)
            try RecordPlanRegistry.register(subject.declaration, on: connection)
            if expanded { try BenchDatabase.expand(subject.source, on: connection) }
            try connection.execute(unsafeSQL: "VACUUM ANALYZE \(subject.table)")
            try connection.execute(unsafeSQL: "CHECKPOINT")
        }
    }

    /// One timed pgbench run of the old application's statements.
    private func writes(_ subject: Subject, seconds: Int, in database: BenchDatabase) async throws -> Pgbench.Run {
        var target = database.pgbenchTarget
        // As the old application names itself (the plans' legacyApplicationPattern, legacy-%).
        target.environment["PGAPPNAME"] = "legacy-bench"
        return try await pgbench.run(script: subject.scripts + "/write.sql", target: target, clients: Self.clients,
                                     seconds: seconds, variables: [("rows", String(options.lengths.legacyWriteRows))])
    }

    private func script(_ subject: Subject, _ file: String) throws -> String {
        try String(contentsOfFile: options.scriptsDirectory + "/" + subject.scripts + "/" + file, encoding: .utf8)
    }
}
