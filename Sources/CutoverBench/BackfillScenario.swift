import Cutover
import CutoverPostgres
import Foundation
import PostgresClient

/// "backfill N rows": the built-in drafts plan's backfill (`BackfillEngine` with the plan's
/// batch statement and batch size) beside one set-based UPDATE of the same table, both under
/// the same live load of saves; the saves' latency with and without a backfill; and the
/// benchmark's peak memory during the backfill at two table sizes.
///
/// An unmeasured set-based backfill warms the server up first (see ``warmUp(rows:in:pool:)``).
/// Every run starts from a fresh table as an application has it just after expand: N rows
/// written before expand (v1 only), the mirror trigger in place,
/// vacuumed, analysed and checkpointed. The live load is a few clients saving through
/// `PostgresDraftStore` at a steady average rate, at random moments, each to drafts spread
/// over the whole key range.
struct BackfillScenario {
    let server: BenchServer
    let pgbench: Pgbench
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_backfill"
    /// Clients of the live load, each saving once per ``savePace``, in turn to up to
    /// ``draftsPerClient`` drafts of its own.
    static let saveClients = 4
    static let savePace: Duration = .milliseconds(20)
    static let draftsPerClient = 20_000

    private struct Run {
        var rows: Int64
        var duration: Duration
        var saves: SaveLoad.Result
        var peakMemory: Int?
        /// How the engine spent the run; nil for the one UPDATE.
        var engine: EngineAccount?
        /// What the server did meanwhile.
        var observation: BackfillObservation
        /// Where the live load's sessions were meanwhile.
        var savesObservation: BackfillObservation

        var rowsPerSecond: Double { duration > .zero ? Double(rows) / duration.seconds : 0 }

        /// `6.1 s, 201 batches of 4,975 rows on average, WAL 490 MB, …`: the run, and why it took that long.
        var account: String {
            let batching = engine.map { "\($0.text(rows: rows)), " } ?? ""
            return String(format: "%.1f s, ", duration.seconds) + batching + observation.summary
        }
    }

    /// How the engine spent a run, from its progress after each batch.
    struct EngineAccount: Sendable {
        var batches = 0
        var passes = 1
        /// Direct batches whose wait for a row ran out (each done again by the skipping batch).
        var directWaitsRunOut = 0
        /// From the start to the first batch: the count of rows to convert, mostly.
        var beforeFirstBatch: Duration = .zero
        /// The batches' own time, as the engine timed each.
        var inBatches: Duration = .zero

        /// `0.4 s before the first batch, 201 batches of 4,975 rows on average in 5.2 s (26 ms each), 1 pass, no direct batch's wait ran out`.
        func text(rows: Int64) -> String {
            let each = batches > 0 ? " (\(Format.milliseconds(inBatches.seconds * 1000 / Double(batches))) each)" : ""
            return String(format: "%.1f s before the first batch, ", beforeFirstBatch.seconds)
                + "\(Format.number(Double(batches))) batch\(batches == 1 ? "" : "es") of \(Format.number(Double(rows) / Double(max(batches, 1)))) rows on average"
                + String(format: " in %.1f s", inBatches.seconds) + each + ", \(passes) pass\(passes == 1 ? "" : "es"), "
                + (directWaitsRunOut == 0 ? "no direct batch's wait ran out" : "\(directWaitsRunOut) direct batches' waits ran out")
        }

        /// The figures for a scenario's `extra`.
        var extra: [String: Double] {
            ["batches": Double(batches), "passes": Double(passes), "direct_waits_run_out": Double(directWaitsRunOut),
             "seconds_before_first_batch": beforeFirstBatch.seconds, "seconds_in_batches": inBatches.seconds]
        }
    }

    /// The engine's sessions' `application_name`, by which ``BackfillObserver`` finds them.
    static let engineApplicationName = "cutover-bench-backfill"
    /// pgbench's own, for the one UPDATE.
    static let pgbenchApplicationName = "pgbench"
    /// How often the live load's sessions are sampled: each runs a statement for about a
    /// millisecond of every 20, so the backfill's 50 ms would see few of them running.
    static let savesSampleInterval: Duration = .milliseconds(20)

    func run() async throws -> [ScenarioResult] {
        let database = try await BenchDatabase.create(Self.databaseName, on: server)
        try await database.sql { connection in
            try ControlSchema.install(on: connection)
            try connection.query("INSERT INTO cutover.migration_state (plan, phase, writer_path) VALUES ('drafts', 'modern', 'modern')")
        }
        let pool = PostgresPool(configuration: database.configuration, maximumConnections: Self.saveClients)
        do {
            let results = try await measure(database, pool: pool)
            await pool.shutdown()
            await database.drop()
            return results
        } catch {
            await pool.shutdown()
            throw error
        }
    }

    private func measure(_ database: BenchDatabase, pool: PostgresPool) async throws -> [ScenarioResult] {
        let rows = options.lengths.backfillRows
        let label = Format.number(Double(rows))
        let window: Duration = .seconds(options.isQuick ? 4 : 10)
        var ours: [Run] = []
        var setBased: [Run] = []
        var alone = Latencies()
        var aloneSaves = 0
        var aloneObservation: BackfillObservation?
        try await warmUp(rows: rows, in: database, pool: pool)
        for round in 0..<options.lengths.backfillRounds {
            for oursFirst in round.isMultiple(of: 2) ? [true, false] : [false, true] {
                var load = try await freshTable(rows: rows, in: database, pool: pool)
                let watching = try await watchSaves(in: database)
                let quiet = await load.run(until: .now + window, pace: Self.savePace)
                let watched = try await watching.finish()
                aloneObservation = aloneObservation.map { $0.adding(watched) } ?? watched
                try check(quiet)
                alone.append(quiet.latencies)
                aloneSaves += quiet.saves
                if oursFirst {
                    ours.append(try await backfillWithEngine(database, load: &load))
                    log.step("backfill, \(label) rows: BackfillEngine \(Format.number(ours.last!.rowsPerSecond)) rows/s, saves p99 \(Format.milliseconds(ours.last!.saves.latencies.percentile(0.99))) (alone \(Format.milliseconds(quiet.latencies.percentile(0.99))))")
                    log.step("  \(ours.last!.account)")
                    log.step("  saves during it \(ours.last!.savesObservation.whileRunningSummary); alone \(watched.whileRunningSummary)")
                } else {
                    setBased.append(try await backfillWithOneUpdate(database, load: &load))
                    log.step("backfill, \(label) rows: one UPDATE \(Format.number(setBased.last!.rowsPerSecond)) rows/s, saves p99 \(Format.milliseconds(setBased.last!.saves.latencies.percentile(0.99)))")
                    log.step("  \(setBased.last!.account)")
                }
            }
        }
        var small = try await freshTable(rows: options.lengths.smallBackfillRows, in: database, pool: pool)
        let smallRun = try await backfillWithEngine(database, load: &small)
        log.step("backfill, \(Format.number(Double(options.lengths.smallBackfillRows))) rows: peak memory \(Format.number(Double(smallRun.peakMemory ?? 0) / 1024)) MiB")

        let pace = engineOptions(for: try draftsBackfill().step)
        let batches = pace.throttle.targetBatchTime > .zero
            ? "batches sized to take \(Int(pace.throttle.targetBatchTime.milliseconds)) ms (first \(pace.batchSize) rows)" : "batches of \(pace.batchSize) rows"
        let settings = "durable commits; \(batches), nice ratio \(pace.niceRatio), \(pace.workers) worker\(pace.workers == 1 ? "" : "s"); "
            + "\(Self.saveClients) clients each saving every \(Self.savePace.milliseconds) ms on average, at random moments, "
            + "during every run; fresh table each run"
        var duringOurs = Latencies()
        ours.forEach { duringOurs.append($0.saves.latencies) }
        var duringSetBased = Latencies()
        setBased.forEach { duringSetBased.append($0.saves.latencies) }
        let throughput = ScenarioResult(
            scenario: "backfill, \(label) rows", unit: "rows/s", ours: median(ours.map(\.rowsPerSecond)),
            baselineName: "pgbench backfill_set_based.sql (one UPDATE)", baseline: median(setBased.map(\.rowsPerSecond)),
            ratio: median(zip(ours, setBased).map { $0.rowsPerSecond / max($1.rowsPerSecond, 1) }),
            goal: .ratioAtLeast(0.9), latencyOurs: duringOurs.summary, latencyBaseline: duringSetBased.summary,
            rows: Int(ours.map(\.rows).reduce(0, +)), duration: ours.map(\.duration.seconds).reduce(0, +),
            rounds: zip(ours, setBased).map { .init(ours: $0.rowsPerSecond, baseline: $1.rowsPerSecond) },
            settings: settings,
            notes: ["latencies are those of the concurrent saves: during BackfillEngine (ours) and during the one UPDATE (baseline)"]
                + Self.accounts(of: ours, as: "BackfillEngine") + Self.accounts(of: setBased, as: "one UPDATE"))
        let duringP99 = duringOurs.percentile(0.99) ?? 0
        let aloneP99 = alone.percentile(0.99) ?? 0
        var liveLoadExtra = savesExtra(during: ours, alone: aloneObservation)
        liveLoadExtra["p99_ms_during_set_based_update"] = duringSetBased.percentile(0.99) ?? 0
        liveLoadExtra["saves_failed_during_set_based_update"] = Double(setBased.map(\.saves.errors).reduce(0, +))
        let duringSummary = BackfillObservation.combined(ours.map(\.savesObservation))?.whileRunningSummary ?? "not seen"
        let savesNote = "where the saves' sessions were, sampled every \(Int(Self.savesSampleInterval.milliseconds)) ms: during BackfillEngine, "
            + duringSummary + "; alone, " + (aloneObservation?.whileRunningSummary ?? "not seen")
            + "; extra: the shares of those samples, during_share_* and alone_share_*"
        let liveLoad = ScenarioResult(
            scenario: "saves' p99 during backfill", unit: "ms", ours: duringP99,
            baselineName: "the same saves without a backfill", baseline: aloneP99,
            ratio: aloneP99 > 0 ? duringP99 / aloneP99 : nil, goal: .ratioBelow(2),
            latencyOurs: duringOurs.summary, latencyBaseline: alone.summary, rows: duringOurs.count + aloneSaves,
            duration: ours.map(\.duration.seconds).reduce(0, +),
            extra: liveLoadExtra, settings: settings, notes: [savesNote])
        let memory = Self.peakMemory(of: ours, rows: rows, against: [smallRun],
                                     rowsThen: options.lengths.smallBackfillRows)
        var results = [throughput, liveLoad, memory]
        if options.lengths.largeBackfillRows > 0 {
            results += try await measureAtScale(database, pool: pool, against: ours, label: label, settings: settings)
        }
        if let standby = try await measureUnderStandbyCeiling(database, pool: pool, label: label,
                                                              unthrottled: median(ours.map(\.rowsPerSecond))) {
            results.append(standby)
        }
        return results
    }

    /// "backfill, N rows" and "backfill peak RSS, N rows" at the large size: the plan's backfill
    /// once over a fresh table of ``BenchOptions/Lengths/largeBackfillRows`` under the same live
    /// load, against `ours` at the first size: rows/s within 0.9× (the cost grows linearly with
    /// the table) and the peak RSS under 1.1× (memory does not grow with it).
    private func measureAtScale(_ database: BenchDatabase, pool: PostgresPool, against ours: [Run], label: String,
                                settings: String) async throws -> [ScenarioResult] {
        let rows = options.lengths.largeBackfillRows
        let largeLabel = Format.number(Double(rows))
        var load = try await freshTable(rows: rows, in: database, pool: pool)
        let large = try await backfillWithEngine(database, load: &load)
        log.step("backfill, \(largeLabel) rows: BackfillEngine \(Format.number(large.rowsPerSecond)) rows/s, peak memory \(Format.number(Double(large.peakMemory ?? 0) / 1024)) MiB")
        log.step("  \(large.account)")
        let firstSize = median(ours.map(\.rowsPerSecond))
        let throughput = ScenarioResult(
            scenario: "backfill, \(largeLabel) rows", unit: "rows/s", ours: large.rowsPerSecond,
            baselineName: "BackfillEngine at \(label) rows (median of its runs above)", baseline: firstSize,
            ratio: firstSize > 0 ? large.rowsPerSecond / firstSize : nil, goal: .ratioAtLeast(0.9),
            latencyOurs: large.saves.latencies.summary, rows: Int(large.rows), duration: large.duration.seconds,
            extra: large.observation.extra().merging(large.engine?.extra ?? [:]) { $1 },
            settings: settings + "; one run",
            notes: Self.accounts(of: [large], as: "BackfillEngine") + Self.accounts(of: ours, as: "BackfillEngine at \(label) rows")
                + ["extra: the WAL the server wrote during the run (MB), checkpoints begun, shared buffers client backends wrote out, "
                   + "and the share of the backfill session's samples (every \(Int(BackfillObserver.interval.milliseconds)) ms) on the CPU, in each wait event, or between statements"])
        return [throughput, Self.peakMemory(of: [large], rows: rows, against: ours, rowsThen: options.lengths.backfillRows)]
    }

    /// A ``BackfillObserver`` of the live load's sessions.
    private func watchSaves(in database: BenchDatabase) async throws -> BackfillObserver {
        // The pool's sessions have the database's application_name (BenchServer.configuration).
        try await BackfillObserver(configuration: database.configuration, applicationNames: [database.configuration.applicationName ?? ""],
                                   interval: Self.savesSampleInterval)
    }

    /// The shares of the saves' samples while running a statement, in each state that matters,
    /// during `runs` and alone.
    private func savesExtra(during runs: [Run], alone: BackfillObservation?) -> [String: Double] {
        var extra: [String: Double] = [:]
        let during = BackfillObservation.combined(runs.map(\.savesObservation))
        for (prefix, observation) in [("during_", during), ("alone_", alone)] {
            guard let observation else { continue }
            let running = observation.whileRunning
            for (name, value) in running.extra(prefix: prefix) where name.contains("share_") && !name.hasSuffix("between_statements") {
                extra[name] = value
            }
            extra[prefix + "running_samples"] = Double(running.sampleCount)
            extra[prefix + "share_lock"] = running.samples.filter { $0.key.hasPrefix("Lock:") }.map { Double($0.value) }
                .reduce(0, +) / Double(max(running.sampleCount, 1))
        }
        return extra
    }

    /// One note per run: `BackfillEngine, run 2: 6.1 s, 201 batches …`.
    private static func accounts(of runs: [Run], as name: String) -> [String] {
        runs.enumerated().map { "\(name), run \($0.offset + 1): \($0.element.account)" }
    }

    /// "backfill peak RSS, N rows": the highest peak of `runs` over `rows` rows against that of
    /// `smaller` over `rowsThen`; goal < 1.1×, memory does not grow with the table.
    private static func peakMemory(of runs: [Run], rows: Int, against smaller: [Run], rowsThen: Int) -> ScenarioResult {
        let peak = Double(runs.compactMap(\.peakMemory).max() ?? 0) / 1024
        let peakThen = Double(smaller.compactMap(\.peakMemory).max() ?? 0) / 1024
        return ScenarioResult(
            scenario: "backfill peak RSS, \(Format.number(Double(rows))) rows", unit: "MiB", ours: peak,
            baselineName: "peak RSS at \(Format.number(Double(rowsThen))) rows", baseline: peakThen,
            ratio: peakThen > 0 ? peak / peakThen : nil, goal: .ratioBelow(1.1),
            rows: rows, duration: runs.map(\.duration.seconds).reduce(0, +),
            settings: "VmHWM of the benchmark process, reset before each backfill, live load included")
    }

    /// The replay-lag ceiling of the standby run.
    static let standbyCeiling: Duration = .seconds(1)
    /// How often the standby run reads the standby's lag.
    static let lagSampleInterval: Duration = .milliseconds(100)

    /// "backfill N rows, standby lag ceiling 1 s": the plan's backfill of a fresh table while a
    /// hot standby, which the benchmark starts from its own cluster (`pg_basebackup -R`),
    /// streams and replays, with the backfill's replay-lag ceiling at ``standbyCeiling``, under
    /// the same live load; the standby's lag is read every ``lagSampleInterval`` from
    /// another session the way the backfill reads it (``StandbyLagMonitor``). Reports the
    /// largest lag seen against the ceiling (goal: under it for the whole backfill) and the
    /// backfill's rows/s beside the unthrottled runs'. Nil with `--database-url`, whose server
    /// the benchmark cannot give a standby.
    private func measureUnderStandbyCeiling(_ database: BenchDatabase, pool: PostgresPool, label: String,
                                            unthrottled: Double) async throws -> ScenarioResult? {
        guard let cluster = server.cluster else {
            log.step("backfill: no standby run with --database-url (the benchmark starts a standby only of its own cluster)")
            return nil
        }
        // The table first, then the standby: its base backup holds the table, and no burst of
        // WAL and CHECKPOINT comes between the backup's end and the standby's streaming. The
        // standby streams without a slot, and a checkpoint in that gap may recycle the WAL it
        // has yet to ask for, after which it never catches up.
        var load = try await freshTable(rows: options.lengths.backfillRows, in: database, pool: pool)
        log.step("backfill: starting a streaming standby")
        let standby = try await cluster.startStandby()
        defer { standby.stop() }
        let (source, step) = try draftsBackfill()
        var pace = engineOptions(for: step)
        pace.replicaLag = ReplicaLagCeiling(maximum: Self.standbyCeiling)
        let engine = try BackfillEngine(source, backfill: step, options: pace)
        let configuration = database.configuration
        // The standby accepts connections before it streams, and the primary lists it only
        // once it has replied: the run starts then.
        try await runOnDedicatedThread(named: "cutover-bench-standby") {
            let connection = try PostgresConnection(configuration: configuration)
            let deadline = ContinuousClock.now + .seconds(60)
            while try !StandbyReplication.list(upstream: "primary", on: connection).contains(where: { $0.isStandby && $0.replayPosition != nil }) {
                guard ContinuousClock.now < deadline else {
                    let said = (try? String(contentsOfFile: standby.logFile, encoding: .utf8)) ?? ""
                    let last = said.split(separator: "\n").suffix(5).joined(separator: "\n  ")
                    throw BenchError("the benchmark's standby did not report its replay within 60 s; the last lines of its log:\n  \(last)")
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let sampling = StopSignal()
        let sampler = Task {
            try await runOnDedicatedThread(named: "cutover-bench-lag") { () throws -> (largest: Duration, samples: Int) in
                let connection = try PostgresConnection(configuration: configuration)
                let monitor = StandbyLagMonitor(ceiling: ReplicaLagCeiling(maximum: Self.standbyCeiling), log: { _ in })
                var largest = Duration.zero
                var samples = 0
                while !sampling.isRaised {
                    let lags = try monitor.measure(on: connection)
                    guard !lags.isEmpty else { throw BenchError("the benchmark's standby does not stream from its cluster") }
                    largest = max(largest, lags.map(\.lag).max() ?? .zero)
                    samples += 1
                    Thread.sleep(forTimeInterval: Self.lagSampleInterval.seconds)
                }
                return (largest, samples)
            }
        }
        let run: Run
        do {
            run = try await measureBackfill(database, load: &load, observing: Self.engineApplicationName) {
                try await self.runEngine(engine, in: database)
            }
        } catch {
            sampling.raise()
            // The backfill's error is the one to report; the sampler's, if any, came after it.
            _ = await sampler.result
            throw error
        }
        sampling.raise()
        let (largest, samples) = try await sampler.value
        log.step("backfill, \(label) rows, streaming standby: \(Format.number(run.rowsPerSecond)) rows/s, largest replay lag \(Format.milliseconds(largest.seconds * 1000)) (ceiling \(Format.milliseconds(Self.standbyCeiling.seconds * 1000)))")
        log.step("  \(run.account)")
        return ScenarioResult(
            scenario: "backfill, \(label) rows, standby lag ceiling \(Int(Self.standbyCeiling.seconds)) s", unit: "s",
            ours: largest.seconds, baselineName: "the ceiling", baseline: Self.standbyCeiling.seconds,
            ratio: largest.seconds / Self.standbyCeiling.seconds, goal: .ratioBelow(1),
            latencyOurs: run.saves.latencies.summary, rows: Int(run.rows), duration: run.duration.seconds,
            extra: ["rows_per_second": run.rowsPerSecond, "unthrottled_rows_per_second": unthrottled,
                    "lag_samples": Double(samples)],
            settings: "one hot standby streaming over loopback from the benchmark's cluster, replaying on the same machine; "
                + "the backfill waits before a batch while the standby's replay lag is over the ceiling; lag read every "
                + "\(Int(Self.lagSampleInterval.milliseconds)) ms from another session; the same live load",
            notes: ["ours is the largest replay lag seen during the backfill; extra.rows_per_second is the backfill's throughput under the ceiling, "
                    + "extra.unthrottled_rows_per_second the median of the runs above without a standby",
                    "a lag is the age of the oldest WAL position the standby had not replayed among those noted at each reading, "
                    + "so a lag shorter than the reading interval reads 0"])
    }

    /// One unmeasured set-based backfill of a fresh table, without a live load, so that the
    /// measured runs find the server as a running one is: a backfill writes about half a
    /// gigabyte of WAL per million rows, and on a new cluster every one of those WAL segments
    /// is created (written full of zeros and synced) while commits wait, where a running server
    /// recycles the segments its checkpoints retired. Without it the first measured run, and
    /// only that one, pays for the cluster's youth.
    private func warmUp(rows: Int, in database: BenchDatabase, pool: PostgresPool) async throws {
        _ = try await freshTable(rows: rows, in: database, pool: pool)
        log.step("backfill: warming up (one unmeasured set-based backfill)")
        _ = try await pgbench.run(script: "backfill_set_based.sql", target: database.pgbenchTarget, clients: 1, transactions: 1)
    }

    /// A new drafts table of `rows` v1-only rows after expand, and a live load over it.
    private func freshTable(rows: Int, in database: BenchDatabase, pool: PostgresPool) async throws -> SaveLoad {
        log.step("backfill: a fresh table of \(Format.number(Double(rows))) rows")
        try await database.sql { connection in
            // Operations of earlier tables' live loads would replay: forget them. CASCADE: the
            // plan's row functions take the table's row type, and expand makes them again.
            try connection.execute(unsafeSQL: "DROP TABLE IF EXISTS drafts CASCADE; TRUNCATE cutover.operation_ledger")
            try BenchDatabase.createLegacyTable(on: connection)
            try connection.query("""
                INSERT INTO drafts (id, title, revision)
                SELECT 'draft-' || lpad(g::text, 9, '0'), 'Draft ' || g, 1 FROM generate_series(1, \(rows)) g
                """)
            try BenchDatabase.expandBuiltInPlan(on: connection)
            try connection.execute(unsafeSQL: "VACUUM ANALYZE drafts")
            try connection.execute(unsafeSQL: "CHECKPOINT")
            try connection.query("""
                UPDATE cutover.migration_state SET backfill_cursor = NULL, backfill_converted = 0, backfill_initial_remaining = NULL WHERE plan = 'drafts'
                """)
        }
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        // Each save goes to another row, drawn at random over the key range, most of them still
        // v1 only: the rows a backfill is converting, as a live application's saves would be.
        var taken = Set<Int>()
        let perClient = min(rows / (2 * Self.saveClients), Self.draftsPerClient)
        let clients = (0..<Self.saveClients).map { _ in
            var draftIDs: [String] = []
            while draftIDs.count < perClient {
                let row = Int.random(in: 1...rows)
                guard taken.insert(row).inserted else { continue }
                draftIDs.append("draft-" + String(repeating: "0", count: max(0, 9 - String(row).count)) + String(row))
            }
            return SaveLoad.Client(draftIDs: draftIDs)
        }
        return SaveLoad(writer: ModernDraftAdapter(storage: store), content: SaveScenario.content, clients: clients)
    }

    /// Runs the plan's backfill with `BackfillEngine` while `load` saves, and measures it.
    private func backfillWithEngine(_ database: BenchDatabase, load: inout SaveLoad) async throws -> Run {
        let (source, step) = try draftsBackfill()
        let engine = try BackfillEngine(source, backfill: step, options: engineOptions(for: step))
        PeakMemory.reset()
        return try await measureBackfill(database, load: &load, observing: Self.engineApplicationName) {
            try await runEngine(engine, in: database)
        }
    }

    /// Runs `engine` on a session of its own named ``engineApplicationName``: rows converted,
    /// time taken, and how the engine spent it.
    private func runEngine(_ engine: BackfillEngine, in database: BenchDatabase) async throws -> (Int64, Duration, EngineAccount?) {
        let configuration = server.configuration(database: database.name, applicationName: Self.engineApplicationName)
        let began = ContinuousClock.now
        return try await runOnDedicatedThread(named: "cutover-bench-backfill") {
            var account = EngineAccount()
            var firstBatch: ContinuousClock.Instant?
            let progress = try engine.run(on: PostgresConnection(configuration: configuration), progress: { progress in
                // Called once before the first batch, then after each batch (and at a pass's end).
                if firstBatch == nil { firstBatch = .now }
                if progress.batches > account.batches {
                    account.inBatches += progress.lastBatchTime
                    account.batches = progress.batches
                }
            })
            account.passes = progress.pass
            account.directWaitsRunOut = progress.directWaitsRunOut
            account.beforeFirstBatch = (firstBatch ?? .now) - began
            return (progress.converted, ContinuousClock.now - began, account)
        }
    }

    /// The built-in drafts plan and its backfill step.
    private func draftsBackfill() throws -> (source: PlanSource, step: PlanBackfill) {
        let source = try PlanSource.builtIn()
        guard let step = source.plan.step(.backfill)?.backfill else { throw BenchError("the drafts plan has no backfill") }
        return (source, step)
    }

    /// The plan step's pace, or the one the command line asks for instead.
    private func engineOptions(for step: PlanBackfill) -> BackfillEngine.Options {
        var pace = BackfillEngine.Options(plan: step).overriding(
            batchSize: options.backfillBatchSize, targetBatchTime: options.backfillTargetBatchTime, niceRatio: options.backfillNiceRatio)
        pace.workers = options.backfillWorkers
        return pace
    }

    /// Runs the one set-based UPDATE with pgbench while `load` saves, and measures it.
    private func backfillWithOneUpdate(_ database: BenchDatabase, load: inout SaveLoad) async throws -> Run {
        let before = try await remaining(database)
        return try await measureBackfill(database, load: &load, observing: Self.pgbenchApplicationName, failedSavesAllowed: true) {
            let run = try await pgbench.run(script: "backfill_set_based.sql", target: database.pgbenchTarget,
                                            clients: 1, transactions: 1)
            return (before - (try await remaining(database)), run.duration, nil)
        }
    }

    /// Runs `backfill` (rows converted, time, batches) while `load` keeps saving and a
    /// ``BackfillObserver`` watches the sessions named `applicationName`, and checks that every
    /// row was converted and, unless `failedSavesAllowed`, that every save committed.
    private func measureBackfill(_ database: BenchDatabase, load: inout SaveLoad, observing applicationName: String,
                                 failedSavesAllowed: Bool = false,
                                 _ backfill: @escaping @Sendable () async throws -> (Int64, Duration, EngineAccount?)) async throws -> Run {
        let observer = try await BackfillObserver(configuration: database.configuration, applicationNames: [applicationName])
        let savesObserver = try await watchSaves(in: database)
        let stop = StopSignal()
        let saving = Task { [load] in
            var running = load
            let result = await running.run(until: .now + .seconds(3600), stop: stop, pace: Self.savePace)
            return (result, running)
        }
        let outcome: Result<(Int64, Duration, EngineAccount?), any Error>
        do {
            outcome = .success(try await backfill())
        } catch {
            outcome = .failure(error)
        }
        stop.raise()
        let (saves, moved) = await saving.value
        load = moved
        let peak = PeakMemory.highWaterMark()
        let observed: Result<(BackfillObservation, BackfillObservation), any Error>
        do {
            observed = .success((try await observer.finish(), try await savesObserver.finish()))
        } catch {
            observed = .failure(error)
        }
        // The backfill's error first: the observer's, if any, came after it.
        let (converted, duration, engine) = try outcome.get()
        let (observation, savesObservation) = try observed.get()
        if !failedSavesAllowed { try check(saves) }
        let left = try await remaining(database)
        guard left == 0 else { throw BenchError("the backfill left \(left) rows unconverted") }
        return Run(rows: converted, duration: duration, saves: saves, peakMemory: peak, engine: engine, observation: observation,
                   savesObservation: savesObservation)
    }

    private func remaining(_ database: BenchDatabase) async throws -> Int64 {
        try await database.sql { connection in
            try connection.query("SELECT count(*) AS n FROM drafts WHERE document IS NULL")[0].decode(Int64.self, "n")
        }
    }

    private func check(_ saves: SaveLoad.Result) throws {
        if let error = saves.firstError { throw BenchError("a save during the backfill scenario failed: \(error)") }
    }
}

