import Cutover
import CutoverPostgres
import PostgresClient

/// The save scenarios: Cutover's stores saves per second beside pgbench baselines, for each
/// client count, in one run.
///
/// - "save" and "client overhead": `PostgresDraftStore` beside pgbench running the textbook
///   transaction, and beside pgbench sending exactly the store's SQL (`cutover.save_draft`).
/// - "record store save" and "record store client overhead": the generic
///   `PostgresRecordStore<DraftRecords>` on the same drafts, beside the same textbook
///   transaction and beside pgbench sending exactly its SQL (the call of the modern path's own
///   function, `cutover.save_modern_drafts_…`); and
///   "record store vs drafts store", the two stores' rates side by side.
/// - "orders save": `PostgresRecordStore<BenchOrders>` on `examples/orders-status-code`'s
///   `orders` after expand (revision: the row's `xmin`), beside its own textbook transaction.
///
/// The drafts sides update drafts of the same table (the drafts plan after expand: `title` and
/// the v2 `document`, the mirror trigger and the v1-only index in place, 100,000 other drafts
/// around) on the modern path; the orders sides update orders (the example's sync trigger in
/// place, 100,000 other orders around) on the modern path. Each round runs every side back to
/// back on fresh rows, in an order that reverses between rounds; each ratio is the median of
/// the rounds' ratios, so that the machine's drift between rounds cancels out.
struct SaveScenario {
    let server: BenchServer
    let pgbench: Pgbench
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_saves"

    /// The content of every drafts save: a title, a couple of sentences, two tags.
    static let content = DraftContent(
        title: "Quarterly plan",
        body: "Revenue targets for the quarter, the hiring plan and the three launches we committed to; "
            + "owners and dates are in the table below, risks at the end.",
        tags: ["planning", "q3"])

    /// The sides of a comparison, in the order a round runs them (the next round reverses it):
    /// each store next to the baseline that sends its own SQL, so that the closest comparisons
    /// (client overhead) are always of two runs side by side.
    private enum Side: String, CaseIterable {
        case ours = "PostgresDraftStore"
        case storeSQL = "save_store_sql.sql"
        case textbook = "save_textbook.sql"
        case recordSQL = "save_record_sql.sql"
        case records = "PostgresRecordStore<DraftRecords>"
        case orders = "PostgresRecordStore<BenchOrders>"
        case ordersTextbook = "save_textbook_orders.sql"

        var isPgbench: Bool { rawValue.hasSuffix(".sql") }
        var savesOrders: Bool { self == .orders || self == .ordersTextbook }
        func name(_ mode: Pgbench.QueryMode) -> String { isPgbench ? "pgbench -M \(mode.rawValue) " + rawValue : rawValue }
    }

    /// The three stores a comparison saves through, over one pool.
    private struct Stores {
        let drafts: PostgresDraftStore
        let records: PostgresRecordStore<DraftRecords>
        let orders: PostgresRecordStore<BenchOrders>

        func close() async {
            try? await drafts.outcomes.close()
            try? await records.outcomes.close()
            try? await orders.outcomes.close()
        }
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

    /// The drafts table and the orders table after their plans' expand, and rows that are not
    /// saved to around.
    private func prepare(_ database: BenchDatabase) async throws {
        let document = Self.document
        try await database.sql { connection in
            try BenchDatabase.createLegacyTable(on: connection)
            try ControlSchema.install(on: connection)
            try BenchDatabase.expandBuiltInPlan(on: connection)
            try BenchDatabase.createExpandedOrders(on: connection)
            try connection.query("""
                INSERT INTO drafts (id, title, revision, document)
                SELECT 'filler-' || g, 'Filler ' || g, 1, \(document)::jsonb FROM generate_series(1, 100000) g
                """)
            try connection.execute(unsafeSQL: "INSERT INTO orders (id, status) SELECT g, 'new' FROM generate_series(1, 100000) g")
            try connection.execute(unsafeSQL: "VACUUM ANALYZE drafts")
            try connection.execute(unsafeSQL: "VACUUM ANALYZE orders")
            try connection.execute(unsafeSQL: "CHECKPOINT")
        }
    }

    /// The drafts plan's modern save function, as its registration names it: the record store
    /// calls it, and `save_record_sql.sql` must call the same.
    private func modernSaveFunction(in database: BenchDatabase) async throws -> String {
        try await database.sql { connection in
            try connection.query("SELECT modern_save_function FROM cutover.record_plans WHERE plan = 'drafts'")[0]
                .decode(String.self, "modern_save_function")
        }
    }

    private func compare(clients: Int, in database: BenchDatabase, nextRound: inout Int) async throws -> [ScenarioResult] {
        let label = "\(clients) client" + (clients == 1 ? "" : "s")
        var configuration = database.configuration
        configuration.preparedStatements = options.preparedStatements
        let pool = PostgresPool(configuration: configuration, maximumConnections: clients)
        do {
            let stores = Stores(drafts: try await PostgresDraftStore(pool: pool),
                                records: try await PostgresRecordStore<DraftRecords>(pool: pool),
                                orders: try await PostgresRecordStore<BenchOrders>(pool: pool))
            do {
                let results = try await compare(clients: clients, label: label, stores: stores, in: database,
                                                nextRound: &nextRound)
                await stores.close()
                await pool.shutdown()
                return results
            } catch {
                await stores.close()
                throw error
            }
        } catch {
            await pool.shutdown()
            throw error
        }
    }

    private func compare(clients: Int, label: String, stores: Stores, in database: BenchDatabase,
                         nextRound: inout Int) async throws -> [ScenarioResult] {
        let lockTimeout = Int(stores.drafts.lockTimeout.milliseconds)
        let executor = options.clientExecutor == .pool ? PostgresPool.taskExecutor : nil

        func measure(_ side: Side, seconds: Int) async throws -> Measurement {
            nextRound += 1
            let round = nextRound
            let keys = (0..<clients).map { String(round * 1000 + $0) }
            let revision = if side.savesOrders { try await seedOrders(keys, in: database) }
                           else { try await seedDrafts(keys, in: database) }
            let serverClock = server.cpuClock
            let serverBefore = serverClock?.used()
            var measurement: Measurement
            if side.isPgbench {
                let names = side == .recordSQL ? [("modern_save_function", try await modernSaveFunction(in: database))] : []
                let run = try await pgbench.run(script: side.rawValue, target: database.pgbenchTarget,
                                                clients: clients, seconds: seconds,
                                                variables: Self.pgbenchVariables(side, round: round, revision: revision,
                                                                                 lockTimeout: lockTimeout),
                                                names: names, mode: pgbenchMode)
                measurement = Measurement(rate: run.tps, count: run.transactions, latencies: run.latencies,
                                          duration: run.duration, clientCPU: run.cpu)
            } else {
                let clients = keys.map { SaveLoad.Client(draftIDs: [$0], revision: revision) }
                var load = switch side {
                case .records:
                    SaveLoad(writer: RecordAdapter(storage: stores.records, path: .modern), clients: clients, executor: executor,
                             key: { RecordKey(.text($0)) }, content: { _ in Self.content })
                case .orders:
                    SaveLoad(writer: RecordAdapter(storage: stores.orders, path: .modern), clients: clients, executor: executor,
                             key: { RecordKey(.bigint(Int64($0) ?? 0)) }, content: BenchOrders.Status.written(bySave:))
                default:
                    SaveLoad(writer: ModernDraftAdapter(storage: stores.drafts), content: Self.content, clients: clients,
                             executor: executor)
                }
                let cpuBefore = CPUClock.ownProcess()
                let result = await load.run(until: .now + .seconds(seconds))
                let cpu = CPUClock.ownProcess() - cpuBefore
                if let error = result.firstError { throw BenchError("a save failed: \(error)") }
                measurement = Measurement(rate: result.savesPerSecond, count: result.saves,
                                          latencies: result.latencies, duration: result.elapsed, clientCPU: cpu)
            }
            if let serverClock, let serverBefore { measurement.serverCPU = serverClock.used() - serverBefore }
            if side.savesOrders {
                try await verifyOrders(keys, saved: measurement.count, by: side.rawValue, in: database)
            } else {
                try await verifyDrafts(keys, saved: measurement.count, by: side.rawValue, in: database)
            }
            return measurement
        }

        log.step("saves, \(label): warming up")
        for side in Side.allCases { _ = try await measure(side, seconds: options.lengths.warmUpSeconds) }
        var measured: [Side: [Measurement]] = [:]
        for round in 0..<options.lengths.rounds {
            // Who runs first alternates, and each store's own SQL runs right beside it: load on
            // this machine drifts within seconds.
            let order = round.isMultiple(of: 2) ? Side.allCases : Array(Side.allCases.reversed())
            for side in order { measured[side, default: []].append(try await measure(side, seconds: options.lengths.seconds)) }
            let figures = Side.allCases.map { "\($0.rawValue) \(Format.number(measured[$0]!.last!.rate))/s" }
            log.step("saves, \(label): round \(round + 1)/\(options.lengths.rounds): " + figures.joined(separator: ", "))
        }

        func row(_ name: String, _ oursSide: Side, against side: Side, goal: ScenarioResult.Goal) -> ScenarioResult {
            let ours = measured[oursSide]!
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
                baselineName: side.name(pgbenchMode), baseline: median(baseline.map(\.rate)),
                ratio: median(rounds.map(\.ratio)), goal: goal,
                latencyOurs: latencyOurs.summary, latencyBaseline: latencyBaseline.summary,
                rows: ours.map(\.count).reduce(0, +), duration: ours.map(\.duration.seconds).reduce(0, +),
                rounds: rounds, extra: extra, settings: settings(clients: clients), notes: [oursSide.name(pgbenchMode)])
        }
        let save = ScenarioResult.Goal.ratioAtLeast(clients == 1 ? 1.25 : 1.0)
        return [
            row("save", .ours, against: .textbook, goal: save),
            row("client overhead", .ours, against: .storeSQL, goal: .ratioAtLeast(0.9)),
            row("record store save", .records, against: .textbook, goal: save),
            row("record store client overhead", .records, against: .recordSQL, goal: .ratioAtLeast(0.9)),
            row("record store vs drafts store", .records, against: .ours, goal: .none),
            row("orders save", .orders, against: .ordersTextbook, goal: save),
        ]
    }

    /// How pgbench sends its statements: as our side does, prepared once per connection or
    /// unnamed, so that both sides' servers parse the same.
    private var pgbenchMode: Pgbench.QueryMode {
        options.preparedStatements == .unnamed ? .extended : .prepared
    }

    private func settings(clients: Int) -> String {
        "durable commits; \(clients) connections each side; \(options.lengths.rounds) rounds of \(options.lengths.seconds) s; "
            + (options.clientExecutor == .pool ? "our clients on the pool's task executor" : "our clients on the cooperative threads")
            + (options.preparedStatements == .unnamed ? ", unnamed statements on both sides (pgbench -M extended)"
                                                     : ", statements prepared per connection on both sides (pgbench -M prepared)")
    }

    /// CPU microseconds per save over a list of runs.
    private static func microsecondsPerSave(_ runs: [Measurement], _ cpu: (Measurement) -> Duration) -> Double {
        let saves = runs.map(\.count).reduce(0, +)
        let total = runs.map { cpu($0).seconds }.reduce(0, +)
        return saves > 0 ? (total * 1_000_000 / Double(saves)).rounded() : 0
    }

    /// The drafts one run saves to, at revision 1; returns 1.
    private func seedDrafts(_ draftIDs: [String], in database: BenchDatabase) async throws -> Int64 {
        let document = Self.document
        let list = draftIDs.joined(separator: ",")
        try await database.sql { connection in
            try connection.query("""
                INSERT INTO drafts (id, title, revision, document)
                SELECT id, \(Self.content.title), 1, \(document)::jsonb FROM unnest(string_to_array(\(list), ',')) AS id
                """)
        }
        return 1
    }

    /// Checks that every save counted really moved its draft by one revision.
    private func verifyDrafts(_ draftIDs: [String], saved: Int, by side: String, in database: BenchDatabase) async throws {
        let list = draftIDs.joined(separator: ",")
        let moved = try await database.sql { connection in
            try connection.query("""
                SELECT coalesce(sum(revision - 1), 0)::bigint AS moved FROM drafts WHERE id = ANY(string_to_array(\(list), ','))
                """)[0].decode(Int.self, "moved")
        }
        guard moved == saved else {
            throw BenchError("\(side) counted \(saved) saves but the drafts moved \(moved) revisions")
        }
    }

    /// The orders one run saves to, made new in one transaction; returns their revision, the
    /// `xmin` they all share.
    private func seedOrders(_ orderIDs: [String], in database: BenchDatabase) async throws -> Int64 {
        let list = orderIDs.joined(separator: ",")
        return try await database.sql { connection in
            try connection.query("""
                INSERT INTO orders (id, status) SELECT id::bigint, 'new' FROM unnest(string_to_array(\(list), ',')) AS id
                RETURNING xmin::text::bigint AS revision
                """)[0].decode(Int64.self, "revision")
        }
    }

    /// Checks that every save counted left one ledger entry and that each order is the
    /// version its last save committed (its `xmin` is that entry's revision).
    private func verifyOrders(_ orderIDs: [String], saved: Int, by side: String, in database: BenchDatabase) async throws {
        let list = orderIDs.joined(separator: ",")
        let (entries, stale) = try await database.sql { connection in
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM cutover.operation_ledger l
                         WHERE l.plan = \(BenchOrders.planName) AND l.scope = ANY(string_to_array(\(list), ',')))::bigint AS entries,
                       (SELECT count(*) FROM orders o
                         WHERE o.id = ANY(string_to_array(\(list), ',')::bigint[])
                           AND NOT EXISTS (SELECT FROM cutover.operation_ledger l
                                            WHERE l.plan = \(BenchOrders.planName) AND l.scope = o.id::text
                                              AND l.revision = o.xmin::text::bigint))::bigint AS stale
                """)[0]
            return (try row.decode(Int.self, "entries"), try row.decode(Int.self, "stale"))
        }
        guard entries == saved, stale == 0 else {
            throw BenchError("\(side) counted \(saved) saves but the ledger holds \(entries), and \(stale) orders are not at their last save's revision")
        }
    }

    /// The v2 document of ``content``, as the modern writer stores it.
    static var document: String {
        String(decoding: DraftCodecV2().encode(content).bytes, as: UTF8.self)
    }

    /// The pgbench variables of one round of `side`: the same values the stores' sides send.
    private static func pgbenchVariables(_ side: Side, round: Int, revision: Int64, lockTimeout: Int) -> [(String, String)] {
        let key = String(round * 1000)
        let hex = { (bytes: [UInt8]) in PostgresBind(bytea: bytes).text ?? "" }
        let common = [("round", String(round)), ("path", SavePath.modern.rawValue)]
        if side.savesOrders {
            let request = SaveRequest<BenchOrders>(operationScope: key, operationID: String(revision),
                                                   key: RecordKey(.bigint(Int64(key)!)), expectedRevision: revision,
                                                   content: .paid)
            return common + [("rev", String(revision)), ("n", "0"), ("request", hex(request.canonicalEncoding))]
        }
        if side == .recordSQL {
            let request = SaveRequest<DraftRecords>(operationScope: key, operationID: "1", key: RecordKey(.text(key)),
                                                    expectedRevision: 1, content: content)
            // The modern format's one column, as the record store's codec writes it.
            guard case .text(let written)? = DraftRecords.modern.encode(content)["document"] else {
                preconditionFailure("the drafts entity's modern format writes its document as text")
            }
            return common + [("rev", "0"), ("request", hex(request.canonicalEncoding)),
                             ("document", written), ("lock_timeout_ms", String(lockTimeout))]
        }
        let request = SaveDraft(operationScope: key, operationID: "1", draftID: key, expectedRevision: 1, content: content)
        return common + [("rev", "0"), ("request", hex(request.canonicalEncoding)),
                         ("title", content.title), ("document", document), ("lock_timeout_ms", String(lockTimeout))]
    }
}
