import Cutover
import CutoverPostgres
import PostgresClient

/// "save, N clients" and "client overhead, N clients": `PostgresDraftStore` saves per second
/// beside pgbench running the textbook transaction, and beside pgbench sending exactly the
/// store's SQL, for each client count.
///
/// Both sides update drafts of the same table (the drafts plan after expand: `title` and the
/// v2 `document`, the mirror trigger and the v1-only index in place, 100,000 other drafts
/// around) on the modern path. Each round runs ours and both baselines back to back on fresh
/// drafts, in an order that alternates between rounds; the ratio is the median of the rounds'
/// ratios, so that the machine's drift between rounds cancels out.
struct SaveScenario {
    let server: BenchServer
    let pgbench: Pgbench
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_saves"

    /// The content of every save: a title, a couple of sentences, two tags.
    static let content = DraftContent(
        title: "Quarterly plan",
        body: "Revenue targets for the quarter, the hiring plan and the three launches we committed to; "
            + "owners and dates are in the table below, risks at the end.",
        tags: ["planning", "q3"])

    private enum Side: String, CaseIterable {
        case ours = "PostgresDraftStore"
        case textbook = "save_textbook.sql"
        case storeSQL = "save_store_sql.sql"
    }

    private struct Measurement {
        var rate: Double
        var count: Int
        var latencies: Latencies
        var duration: Duration
        /// CPU time of the client (our process, or pgbench) and of the server during the run.
        var clientCPU: Duration
        var serverCPU: Duration?
    }

    func run() async throws -> [ScenarioResult] {
        let database = try await BenchDatabase.create(Self.databaseName, on: server)
        try await prepare(database)
        var nextRound = 1000
        var results: [ScenarioResult] = []
        for clients in options.clientCounts {
            results += try await compare(clients: clients, in: database, nextRound: &nextRound)
        }
        await database.drop()
        return results
    }

    /// The drafts table after the plan's expand, and drafts that are not saved to around.
    private func prepare(_ database: BenchDatabase) async throws {
        let document = Self.document
        try await database.sql { connection in
            try BenchDatabase.createLegacyTable(on: connection)
            try ControlSchema.install(on: connection)
            try BenchDatabase.expandBuiltInPlan(on: connection)
            try connection.query("""
                INSERT INTO drafts (id, title, revision, document)
                SELECT 'filler-' || g, 'Filler ' || g, 1, \(document)::jsonb FROM generate_series(1, 100000) g
                """)
            try connection.execute(unsafeSQL: "VACUUM ANALYZE drafts")
            try connection.execute(unsafeSQL: "CHECKPOINT")
        }
    }

    private func compare(clients: Int, in database: BenchDatabase, nextRound: inout Int) async throws -> [ScenarioResult] {
        let label = "\(clients) client" + (clients == 1 ? "" : "s")
        var configuration = database.configuration
        configuration.preparedStatements = options.preparedStatements
        let pool = PostgresPool(configuration: configuration, maximumConnections: clients)
        let store = try await PostgresDraftStore(pool: pool)
        let writer = ModernDraftAdapter(storage: store)
        let lockTimeout = Int(store.lockTimeout.milliseconds)
        do {
            let results = try await compare(clients: clients, label: label, writer: writer, lockTimeout: lockTimeout,
                                            in: database, nextRound: &nextRound)
            try? await store.outcomes.close()
            await pool.shutdown()
            return results
        } catch {
            await pool.shutdown()
            throw error
        }
    }

    private func compare(clients: Int, label: String, writer: ModernDraftAdapter, lockTimeout: Int,
                         in database: BenchDatabase, nextRound: inout Int) async throws -> [ScenarioResult] {

        func measure(_ side: Side, seconds: Int) async throws -> Measurement {
            nextRound += 1
            let round = nextRound
            let draftIDs = (0..<clients).map { String(round * 1000 + $0) }
            try await seed(draftIDs, in: database)
            let serverClock = server.cpuClock
            let serverBefore = serverClock?.used()
            var measurement: Measurement
            switch side {
            case .ours:
                var load = SaveLoad(writer: writer, content: Self.content,
                                    clients: draftIDs.map { SaveLoad.Client(draftIDs: [$0]) },
                                    executor: options.clientExecutor == .pool ? PostgresPool.taskExecutor : nil)
                let cpuBefore = CPUClock.ownProcess()
                let result = await load.run(until: .now + .seconds(seconds))
                let cpu = CPUClock.ownProcess() - cpuBefore
                if let error = result.firstError { throw BenchError("a save failed: \(error)") }
                measurement = Measurement(rate: result.savesPerSecond, count: result.saves,
                                          latencies: result.latencies, duration: result.elapsed, clientCPU: cpu)
            case .textbook, .storeSQL:
                let run = try await pgbench.run(script: side.rawValue, target: database.pgbenchTarget,
                                                clients: clients, seconds: seconds,
                                                variables: Self.pgbenchVariables(round: round, lockTimeout: lockTimeout))
                measurement = Measurement(rate: run.tps, count: run.transactions, latencies: run.latencies,
                                          duration: run.duration, clientCPU: run.cpu)
            }
            if let serverClock, let serverBefore { measurement.serverCPU = serverClock.used() - serverBefore }
            try await verify(draftIDs, saved: measurement.count, by: side, in: database)
            return measurement
        }

        log.step("saves, \(label): warming up")
        for side in Side.allCases { _ = try await measure(side, seconds: options.lengths.warmUpSeconds) }
        var measured: [Side: [Measurement]] = [:]
        for round in 0..<options.lengths.rounds {
            // The store's SQL runs between ours and the textbook in every round, so that the
            // closest comparison (client overhead) is always of two runs side by side: load on
            // this machine drifts within seconds. Who runs first alternates.
            let order: [Side] = round.isMultiple(of: 2) ? [.ours, .storeSQL, .textbook] : [.textbook, .storeSQL, .ours]
            for side in order { measured[side, default: []].append(try await measure(side, seconds: options.lengths.seconds)) }
            let figures = Side.allCases.map { "\($0.rawValue) \(Format.number(measured[$0]!.last!.rate))/s" }
            log.step("saves, \(label): round \(round + 1)/\(options.lengths.rounds): " + figures.joined(separator: ", "))
        }

        let ours = measured[.ours]!
        func row(_ name: String, against side: Side, goal: Double, settings: String) -> ScenarioResult {
            let baseline = measured[side]!
            var latencyOurs = Latencies()
            var latencyBaseline = Latencies()
            ours.forEach { latencyOurs.append($0.latencies) }
            baseline.forEach { latencyBaseline.append($0.latencies) }
            let rounds = zip(ours, baseline).map { ScenarioResult.Round(ours: $0.rate, baseline: $1.rate) }
            var extra = [
                "client_cpu_us_per_save_ours": Self.microsecondsPerSave(ours, \.clientCPU),
                "client_cpu_us_per_save_baseline": Self.microsecondsPerSave(baseline, \.clientCPU),
            ]
            if ours.allSatisfy({ $0.serverCPU != nil }) && baseline.allSatisfy({ $0.serverCPU != nil }) {
                extra["server_cpu_us_per_save_ours"] = Self.microsecondsPerSave(ours) { $0.serverCPU! }
                extra["server_cpu_us_per_save_baseline"] = Self.microsecondsPerSave(baseline) { $0.serverCPU! }
            }
            return ScenarioResult(
                scenario: "\(name), \(label)", unit: "saves/s", ours: median(ours.map(\.rate)),
                baselineName: "pgbench -M prepared " + side.rawValue, baseline: median(baseline.map(\.rate)),
                ratio: median(rounds.map(\.ratio)), goal: .ratioAtLeast(goal),
                latencyOurs: latencyOurs.summary, latencyBaseline: latencyBaseline.summary,
                rows: ours.map(\.count).reduce(0, +), duration: ours.map(\.duration.seconds).reduce(0, +),
                rounds: rounds, extra: extra, settings: settings)
        }
        let settings = "durable commits; \(clients) connections each side; \(options.lengths.rounds) rounds of \(options.lengths.seconds) s; "
            + (options.clientExecutor == .pool ? "our clients on the pool's task executor" : "our clients on the cooperative threads")
            + (options.preparedStatements == .unnamed ? ", unnamed statements" : ", statements prepared per connection")
        return [
            row("save", against: .textbook, goal: clients == 1 ? 1.25 : 1.0, settings: settings),
            row("client overhead", against: .storeSQL, goal: 0.9, settings: settings),
        ]
    }

    /// CPU microseconds per save over a list of runs.
    private static func microsecondsPerSave(_ runs: [Measurement], _ cpu: (Measurement) -> Duration) -> Double {
        let saves = runs.map(\.count).reduce(0, +)
        let total = runs.map { cpu($0).seconds }.reduce(0, +)
        return saves > 0 ? (total * 1_000_000 / Double(saves)).rounded() : 0
    }

    /// The drafts one run saves to, at revision 1.
    private func seed(_ draftIDs: [String], in database: BenchDatabase) async throws {
        let document = Self.document
        let list = draftIDs.joined(separator: ",")
        try await database.sql { connection in
            try connection.query("""
                INSERT INTO drafts (id, title, revision, document)
                SELECT id, \(Self.content.title), 1, \(document)::jsonb FROM unnest(string_to_array(\(list), ',')) AS id
                """)
        }
    }

    /// Checks that every save counted really moved its draft by one revision.
    private func verify(_ draftIDs: [String], saved: Int, by side: Side, in database: BenchDatabase) async throws {
        let list = draftIDs.joined(separator: ",")
        let moved = try await database.sql { connection in
            try connection.query("""
                SELECT coalesce(sum(revision - 1), 0)::bigint AS moved FROM drafts WHERE id = ANY(string_to_array(\(list), ','))
                """)[0].decode(Int.self, "moved")
        }
        guard moved == saved else {
            throw BenchError("\(side.rawValue) counted \(saved) saves but the drafts moved \(moved) revisions")
        }
    }

    /// The v2 document of ``content``, as the modern writer stores it.
    static var document: String {
        String(decoding: DraftCodecV2().encode(content).bytes, as: UTF8.self)
    }

    /// The pgbench variables of one round: the same values the store's side sends.
    static func pgbenchVariables(round: Int, lockTimeout: Int) -> [(String, String)] {
        let request = SaveDraft(operationScope: String(round * 1000), operationID: "1", draftID: String(round * 1000),
                                expectedRevision: 1, content: content)
        return [("rev", "0"), ("round", String(round)), ("request", request.canonicalEncoding.postgresBind.text ?? ""),
                ("title", content.title), ("document", document), ("path", SavePath.modern.rawValue),
                ("lock_timeout_ms", String(lockTimeout))]
    }
}
