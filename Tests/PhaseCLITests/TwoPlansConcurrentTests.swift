import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Two migrations in one database, the built-in drafts plan and `examples/orders-status-code/`,
/// each walked through its whole cycle by `phase`, their steps run at the same time: each
/// plan's readers, outcome counts and ledger entries stay its own, and the runner's exclusion is
/// per plan.
@Suite("Two plans migrating two tables at once", .timeLimit(.minutes(6)))
struct TwoPlansConcurrentTests {
    /// The orders example's plan, as `phase` names it (the `name` of its `plan.json`).
    static let orders = "orders-status-code"

    /// Both databases' views: drafts through ``WorkflowDatabase``, orders through ``ExampleDatabase``.
    struct Migrations: Sendable {
        let drafts: WorkflowDatabase
        let orders: ExampleDatabase

        /// Starts `phase` for drafts with `drafts` and for orders with `orders` together, and
        /// waits for both.
        func together(drafts draftsArguments: [String], orders ordersArguments: [String])
            async throws -> (drafts: PhaseBinary.Run, orders: PhaseBinary.Run) {
            let url = drafts.url
            let ordersPlan = orders.workload.path
            return try await onThread {
                let first = try PhaseBinary.start(draftsArguments, databaseURL: url)
                let second = try PhaseBinary.start(["--plan", ordersPlan] + ordersArguments, databaseURL: url)
                return (try PhaseBinary.finish(first), try PhaseBinary.finish(second))
            }
        }

        /// Runs `phase` for orders.
        func ordersPhase(_ arguments: String...) async throws -> PhaseBinary.Run {
            try await drafts.phase(["--plan", orders.workload.path] + arguments)
        }
    }

    /// A plain-SQL reader's heartbeat with `plan`, as any application sends it.
    private static func heartbeat(_ plan: String, _ instance: String, formats: [String], token: String,
                                  on connection: PostgresConnection) throws {
        try ReaderRegistry.heartbeat(plan: plan, instanceID: instance, applicationName: "reports", applicationVersion: "3.9",
                                     formats: formats, token: token, on: connection)
    }

    @Test func twoPlansRunTheirWholeCyclesAtOnceWithTheirOwnReadersCountsLedgersAndRunners() async throws {
        let drafts = try await WorkflowDatabase.make("two_plans", rows: 200)
        let orders = try await ExampleDatabase.make(.ordersStatusCode, in: drafts.database)
        let both = Migrations(drafts: drafts, orders: orders)

        let initialized = try await both.together(drafts: ["init"], orders: ["init"])
        #expect(initialized.drafts.status == 0, "\(initialized.drafts.diagnostics)")
        #expect(initialized.orders.status == 0, "\(initialized.orders.diagnostics)")

        // expand, while a first drafts runner waits for a lock on its table: a second drafts runner
        // is refused (75), and the orders runner goes through its expand meanwhile.
        let holder = try drafts.database.connect(applicationName: "lock-holder")
        try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE drafts IN ACCESS EXCLUSIVE MODE")
        let first = try PhaseBinary.start(["expand", "--lock-timeout", "100ms", "--max-backoff", "200ms", "--max-retries", "1000"],
                                          databaseURL: drafts.url)
        #expect(try await eventually(within: .seconds(60)) {
            try await drafts.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE plan = 'drafts' AND outcome = 'running'") == 1
        })
        let excluded = try await both.together(drafts: ["expand", "--max-retries", "0"], orders: ["expand"])
        #expect(excluded.drafts.status == 75, "\(excluded.drafts.diagnostics)")
        #expect(excluded.drafts.diagnostics.hasPrefix("Error: another phase runner is working on plan drafts: pid "),
                "\(excluded.drafts.diagnostics)")
        #expect(excluded.orders.status == 0, "\(excluded.orders.diagnostics)")
        #expect(try await drafts.phaseName(plan: Self.orders) == "expanded")
        #expect(try await drafts.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE plan = 'drafts' AND outcome = 'running'") == 1,
                "the first drafts runner ended before the others ran")
        try holder.execute(unsafeSQL: "COMMIT")
        let expanded = try await onThread { try PhaseBinary.finish(first) }
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
        #expect(try await drafts.phaseName() == "expanded")

        // Readers: the same instance ID registers with both plans, each following its plan's path;
        // a reports instance reads orders only, and never reports an epoch.
        let configuration = drafts.database.configuration(applicationName: "two-plans-app")
        let pool = PostgresPool(configuration: configuration, maximumConnections: 3)
        let draftsFleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts", pollInterval: .milliseconds(500))
        let ordersFleet = try await FleetWriterPath.start(configuration: configuration, plan: Self.orders, pollInterval: .milliseconds(500))
        let draftsReader = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(20),
                                                        following: draftsFleet)
        let ordersReader = try await ReaderRegistration(pool: pool, plan: Self.orders, instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(20),
                                                        following: ordersFleet)
        let reportsToken = ReaderRegistry.makeToken()
        try await drafts.sql { try Self.heartbeat(Self.orders, "report-1", formats: ["v1", "v2"], token: reportsToken, on: $0) }
        let listed = try await both.together(drafts: ["readers"], orders: ["readers"])
        #expect(listed.drafts.status == 0 && listed.orders.status == 0, "\(listed.drafts.diagnostics)\(listed.orders.diagnostics)")
        #expect(Self.instances(listed.drafts.output) == ["web-1"], "\(listed.drafts.output)")
        #expect(Self.instances(listed.orders.output) == ["report-1", "web-1"], "\(listed.orders.output)")

        // switch modern: both pass their reader checks with their own readers; drafts waits for its
        // fleet, which report-1 (an orders reader that reports no epoch) is not part of.
        let switched = try await both.together(drafts: ["switch", "modern", "--wait-for-fleet", "--fleet-timeout", "60s"],
                                               orders: ["switch", "modern"])
        #expect(switched.drafts.status == 0, "\(switched.drafts.output)\(switched.drafts.diagnostics)")
        #expect(switched.drafts.output.contains("fleet: 1 of 1 live instances follow epoch"), "\(switched.drafts.output)")
        #expect(switched.orders.status == 0, "\(switched.orders.diagnostics)")

        // Outcomes and ledger entries of each plan, the same scope and operation ID in both.
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                following: draftsFleet)
        #expect(try await eventually { draftsFleet.current.path == .modern })
        for (index, operation) in ["op-1", "op-2", "op-3"].enumerated() {
            let saved = try await router.save(SaveDraft(operationScope: "account-1", operationID: operation, draftID: "seed-000001",
                                                        expectedRevision: Int64(index + 1), content: DraftContent(title: "Edit \(index)")))
            #expect(saved.revision == Int64(index + 2))
        }
        try await store.outcomes.flush()
        let ordersOutcomes = OutcomeRecorder(pool: pool, plan: Self.orders, flushInterval: nil)
        for _ in 0..<20 { ordersOutcomes.record(.committed, on: .modern) }
        for _ in 0..<5 { ordersOutcomes.recordError(on: .modern) }
        try await ordersOutcomes.flush()
        try await drafts.sql { connection in
            // Orders has no store of its own here: its entries are written as its owner writes the ledger.
            try connection.execute(unsafeSQL: """
                INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path)
                SELECT 'orders-status-code', 'account-1', 'op-' || n, sha256(convert_to('order ' || n, 'UTF8')), n::text, 2, 'modern'
                  FROM generate_series(1, 2) AS n
                """)
        }
        let observed = try await both.together(drafts: ["observe", "--min-saves", "1"], orders: ["observe", "--min-saves", "1"])
        #expect(observed.drafts.status == 0, "\(observed.drafts.output)\(observed.drafts.diagnostics)")
        #expect(observed.drafts.output.contains("modern, last 5m: 3 saves, 0 failed"), "\(observed.drafts.output)")
        #expect(observed.orders.status == 3, "\(observed.orders.output)\(observed.orders.diagnostics)")
        #expect(observed.orders.output.contains("modern, last 5m: 25 saves, 5 failed"), "\(observed.orders.output)")

        // Ledger prune: each plan's own entries only; --all-plans every plan's.
        try await drafts.sql { try $0.execute(unsafeSQL: "UPDATE cutover.operation_ledger SET committed_at = now() - interval '8 days'") }
        let pruned = try await both.together(drafts: ["ledger", "prune", "--dry-run"], orders: ["ledger", "prune"])
        #expect(pruned.drafts.output.contains("dry run: 3 ledger rows of plan \"drafts\" are past the retention"), "\(pruned.drafts.output)")
        #expect(pruned.orders.status == 0, "\(pruned.orders.diagnostics)")
        #expect(pruned.orders.output.contains("pruned 2 ledger rows of plan \"orders-status-code\" in 1 batch"), "\(pruned.orders.output)")
        #expect(try await Self.ledger(drafts) == ["drafts/account-1/op-1", "drafts/account-1/op-2", "drafts/account-1/op-3"])
        // A retry of a drafts operation replays: its entry was never the orders prune's.
        let replayed = try await router.save(SaveDraft(operationScope: "account-1", operationID: "op-3", draftID: "seed-000001",
                                                       expectedRevision: 3, content: DraftContent(title: "Edit 2")))
        #expect(replayed.revision == 4)

        let backfilled = try await both.together(drafts: ["backfill"], orders: ["backfill"])
        #expect(backfilled.drafts.status == 0, "\(backfilled.drafts.diagnostics)")
        #expect(backfilled.orders.status == 0, "\(backfilled.orders.diagnostics)")

        // contract: a v1-only reader of orders holds up orders' contract, not drafts'.
        try await drafts.sql { try Self.heartbeat(Self.orders, "report-1", formats: ["v1"], token: reportsToken, on: $0) }
        let contracting = try await both.together(drafts: ["contract", "--yes", "--window", "0s"],
                                                  orders: ["contract", "--yes", "--window", "0s"])
        #expect(contracting.drafts.status == 0, "\(contracting.drafts.output)\(contracting.drafts.diagnostics)")
        #expect(contracting.orders.status == 3, "\(contracting.orders.output)\(contracting.orders.diagnostics)")
        let refusal = contracting.orders.output + contracting.orders.diagnostics
        #expect(refusal.contains("no live reader needs v1: expected none, observed 1 live: report-1 (reports 3.9: v1)"), "\(refusal)")
        #expect(try await drafts.phaseName() == "contracted")
        #expect(try await drafts.phaseName(plan: Self.orders) == "backfilled")

        let left = try await drafts.sql { try ReaderRegistry.leave(plan: Self.orders, instanceID: "report-1", token: reportsToken, on: $0) }
        #expect(left)
        let contracted = try await both.ordersPhase("contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.output)\(contracted.diagnostics)")
        #expect(try await drafts.phaseName(plan: Self.orders) == "contracted")

        // Every plan's entries go with --all-plans.
        try await drafts.sql { connection in
            try connection.execute(unsafeSQL: """
                INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path, committed_at)
                VALUES ('orders-status-code', 'account-1', 'op-1', sha256('order'::bytea), '1', 3, 'modern', now() - interval '8 days')
                """)
            try connection.execute(unsafeSQL: "UPDATE cutover.operation_ledger SET committed_at = now() - interval '8 days'")
        }
        let all = try await drafts.phase("ledger", "prune", "--all-plans")
        #expect(all.status == 0, "\(all.diagnostics)")
        #expect(all.output.contains("pruned 4 ledger rows of every plan in 1 batch"), "\(all.output)")
        #expect(try await Self.ledger(drafts).isEmpty)

        try await draftsReader.stop()
        try await ordersReader.stop()
        try await ordersOutcomes.close()
        try await store.outcomes.close()
        await draftsFleet.stop()
        await ordersFleet.stop()
        await pool.shutdown()
    }

    /// The instance IDs `phase readers` listed, one per line, in its order.
    private static func instances(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 1 && ["live", "late", "stale"].contains(String(fields[0])) ? String(fields[1]) : nil
        }
    }

    /// The ledger's entries as `plan/scope/operation_id`, sorted.
    private static func ledger(_ db: WorkflowDatabase) async throws -> [String] {
        try await db.sql { connection in
            try connection.query("SELECT plan || '/' || scope || '/' || operation_id AS entry FROM cutover.operation_ledger ORDER BY 1")
                .map { try $0.decode(String.self, "entry") }
        }
    }
}
