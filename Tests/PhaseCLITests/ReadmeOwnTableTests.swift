import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// README.md's "Your own table": its ``OrderService`` (ReadmeOrderService.swift, the README's
/// code line for line) adopting Cutover for `examples/orders-status-code/`, run as two instances
/// through the plan's whole cycle and a rollback drill while the old application writes `status`
/// with plain SQL the whole time.
@Suite("README: the order service on its own table")
struct ReadmeOwnTableTests {
    /// The orders the two instances share; above every key the old writer touches.
    static let orders: [Int64] = Array(3_000_001...3_000_006)

    /// The instances' IDs.
    static let instances = ["orders-1", "orders-2"]

    /// A stretch of time in which the fleet's writer path was `path` throughout.
    struct Stretch {
        var path: SavePath
        var from: ContinuousClock.Instant
        var to: ContinuousClock.Instant
        var name: String
    }

    /// One row of the plan's ledger.
    struct LedgerRow: Sendable, Equatable {
        var order: Int64
        var revision: Int64
        var path: SavePath
    }

    @Test(.timeLimit(.minutes(3)))
    func twoInstancesKeepEverySaveThroughTheCycleAndARollbackDrill() async throws {
        let example = try await ExampleDatabase.make(.ordersStatusCode)
        let url = example.database.connectionString
        let legacy = try example.startLegacyWriter()
        try await example.phase("init")
        let services = [try await OrderService(databaseURL: url, instanceID: Self.instances[0]),
                        try await OrderService(databaseURL: url, instanceID: Self.instances[1])]
        let workload = OrderServiceWorkload(orders: Self.orders)
        let start = ContinuousClock.now
        try await expectEveryOutcome(of: services[0], logging: workload)
        let running = zip(services, Self.instances).map { service, instance in
            Task { await workload.run(service, instance: instance) }
        }
        try await expectSaves(workload, after: start, "before expand")

        try await example.phase("expand")
        try await expectSaves(workload, after: .now, "after expand")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after expand")

        // switch modern returns once both instances report following it.
        let switching = ContinuousClock.now
        try await example.phase("switch", "modern", "--wait-for-fleet", "--fleet-timeout", "60s")
        let switched = ContinuousClock.now
        try await expectSaves(workload, after: switched, "after switch modern")

        // The rollback drill: back to the legacy writer, which each instance follows, and forward again.
        let rollingBack = ContinuousClock.now
        try await example.phase("rollback", "switch")
        for service in services {
            let followed = await service.fleet.waitUntil(timeout: .seconds(60)) { $0.path == .legacy }
            #expect(followed, "\(service.registration.instanceID) still follows \(service.fleet.current) after rollback switch")
        }
        let rolledBack = ContinuousClock.now
        try await expectSaves(workload, after: rolledBack, "after rollback switch")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after rollback switch")
        let switchingAgain = ContinuousClock.now
        try await example.phase("switch", "modern", "--wait-for-fleet", "--fleet-timeout", "60s")
        let switchedAgain = ContinuousClock.now
        try await expectSaves(workload, after: switchedAgain, "after switching modern again")

        try await example.phase("backfill")
        try await expectSaves(workload, after: .now, "after backfill")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after backfill")
        try await example.expectAgreement("after backfill", allConverted: true)

        // The old application goes before contract, as contract requires; the instances save on.
        try await legacy.stopExpectingNoError("from before expand to contract")
        try await example.phase("contract", "--yes", "--window", "0s")
        let contracted = ContinuousClock.now
        try await expectSaves(workload, after: contracted, "after contract")
        // Each order's last write is then one of the instances' saves.
        let savedAfterContract = try await eventually(within: .seconds(60)) {
            !workload.failures.isEmpty || Self.orders.allSatisfy { workload.count(of: $0, startedAfter: contracted) > 0 }
        }
        #expect(savedAfterContract && workload.failures.isEmpty, "not every order saved after contract: \(workload.failures)")
        workload.stop()
        for task in running { await task.value }
        let end = ContinuousClock.now

        let saves = workload.saves
        let stretches = [
            Stretch(path: .legacy, from: start, to: switching, name: "before switch modern"),
            Stretch(path: .modern, from: switched, to: rollingBack, name: "after switch modern"),
            Stretch(path: .legacy, from: rolledBack, to: switchingAgain, name: "after rollback switch"),
            Stretch(path: .modern, from: switchedAgain, to: end, name: "after switching modern again, through contract"),
        ]
        let ledger = try await ledgerRows(example)
        try await expectEverySaveKept(saves, ledger: ledger, services: services, stretches: stretches)
        for service in services { try await service.stop() }
    }

    /// A reply to COMMIT lost on the way to the service: its save of the order retries the same
    /// request, which the ledger replays, so that the caller gets the revision that committed, once.
    @Test(.timeLimit(.minutes(3)))
    func aLostReplyToCommitIsRetriedWithTheSameOperationIDAndReplayed() async throws {
        let example = try await ExampleDatabase.make(.ordersStatusCode)
        try await example.phase("init")
        let (proxy, proxied) = try example.database.throughLossyProxy()
        let service = try await OrderService(databaseURL: proxied, instanceID: "orders-1")
        let created = try await service.setStatus(of: 3_000_001, to: .new, expecting: 0, operationID: "orders-1-create")
        guard case .saved(let revision) = created else {
            Issue.record("creating the order: \(created)")
            return
        }
        // The service's heartbeat and its writer path's poll go through the proxy too: lose the
        // reply to the save's own statement.
        proxy.loseNextReplyToCommit(ofStatementContaining: "cutover.save_")
        let paid = try await service.setStatus(of: 3_000_001, to: .paid, expecting: revision, operationID: "orders-1-pay")
        #expect(proxy.lostReplyCount == 1)
        let counts = await service.router.counts
        #expect(counts.count(of: .outcomeUnknown, on: .legacy) == 1 && counts.count(of: .replayed, on: .legacy) == 1,
                "\(counts.outcomes(on: .legacy))")
        let ledger = try await ledgerRows(example)
        #expect(ledger.count == 2)
        guard case .saved(let paidRevision) = paid else {
            Issue.record("paying the order: \(paid)")
            return
        }
        #expect(ledger["orders-1-pay"] == LedgerRow(order: 3_000_001, revision: paidRevision, path: .legacy))
        let read = try await service.status(of: 3_000_001)
        #expect(read?.status == .paid && read?.revision == paidRevision, "the order reads \(String(describing: read))")
        try await service.stop()
        proxy.stop()
    }

    /// Each outcome the README's service handles, once, on an order of its own: a create, its
    /// replay, the same operation ID for another change, a conflict with the current revision and
    /// an order that does not exist. The create is logged with the workload's saves.
    private func expectEveryOutcome(of service: OrderService, logging workload: OrderServiceWorkload) async throws {
        let order: Int64 = 3_000_100
        let started = ContinuousClock.now
        let created = try await service.setStatus(of: order, to: .new, expecting: 0, operationID: "orders-1-create")
        guard case .saved(let revision) = created else {
            Issue.record("creating order \(order): \(created)")
            return
        }
        workload.record(.init(instance: "orders-1", operationID: "orders-1-create", order: order, expected: 0,
                              revision: revision, status: .new, started: started, ended: .now))
        #expect(try await service.setStatus(of: order, to: .new, expecting: 0, operationID: "orders-1-create") == created)
        #expect(try await service.setStatus(of: order, to: .paid, expecting: 0, operationID: "orders-1-create") == .operationIDReused)
        #expect(try await service.setStatus(of: order, to: .paid, expecting: 0, operationID: "orders-1-again")
                == .conflict(currentRevision: revision))
        #expect(try await service.setStatus(of: order + 1, to: .paid, expecting: revision, operationID: "orders-1-absent") == .notFound)
        let read = try await service.status(of: order)
        #expect(read?.status == .new, "order \(order) reads \(String(describing: read))")
        #expect(read?.revision == revision, "order \(order) reads \(String(describing: read)), saved at \(revision)")
        if let absent = try await service.status(of: order + 1) {
            Issue.record("order \(order + 1), never created, reads \(absent)")
        }
    }

    /// Waits until each instance has acknowledged saves that started after `instant`.
    private func expectSaves(_ workload: OrderServiceWorkload, after instant: ContinuousClock.Instant,
                             _ context: String) async throws {
        let saved = try await eventually(within: .seconds(60)) {
            !workload.failures.isEmpty || Self.instances.allSatisfy { workload.count(by: $0, startedAfter: instant) >= 3 }
        }
        #expect(saved && workload.failures.isEmpty, "\(context): \(workload.failures.isEmpty ? "no saves" : workload.failures.joined(separator: " | "))")
    }

    /// The plan's ledger, by operation ID, after checking that every entry is of the service's scope.
    private func ledgerRows(_ example: ExampleDatabase) async throws -> [String: LedgerRow] {
        let scopes = try await example.lines("SELECT DISTINCT scope FROM cutover.operation_ledger WHERE plan = 'orders-status-code'")
        #expect(scopes == ["shop-1"], "the plan's ledger holds the scopes \(scopes)")
        let database = example.database
        return try await onThread {
            let rows = try database.connect(applicationName: "example-observer").query(PostgresQuery(unsafeSQL: """
                SELECT operation_id, (record_key->>'id')::bigint AS id, revision, path
                  FROM cutover.operation_ledger WHERE plan = 'orders-status-code'
                """))
            var ledger: [String: LedgerRow] = [:]
            for row in rows {
                let path = try row.decode(String.self, "path")
                ledger[try row.decode(String.self, "operation_id")] = LedgerRow(
                    order: try row.decode(Int64.self, "id"), revision: try row.decode(Int64.self, "revision"),
                    path: path == "modern" ? .modern : .legacy)
            }
            return ledger
        }
    }

    /// Every acknowledged save is in the ledger once, with its order and revision, and nothing
    /// else is; each went down the path of the stretch it fell in, as its router counted; no
    /// two saves of an order were made on one revision; each order is as its last save left it.
    private func expectEverySaveKept(_ saves: [OrderServiceWorkload.Save], ledger: [String: LedgerRow],
                                     services: [OrderService], stretches: [Stretch]) async throws {
        #expect(Set(saves.map(\.operationID)).count == saves.count, "an operation ID acknowledged twice")
        #expect(ledger.count == saves.count, "\(saves.count) saves acknowledged, \(ledger.count) in the ledger")
        for save in saves {
            let entry = ledger[save.operationID]
            #expect(entry?.order == save.order && entry?.revision == save.revision,
                    "\(save.operationID): saved order \(save.order) at \(save.revision), the ledger has \(String(describing: entry))")
        }

        for stretch in stretches {
            let within = saves.filter { $0.started >= stretch.from && $0.ended <= stretch.to }
            let astray = within.filter { ledger[$0.operationID]?.path != stretch.path }
            #expect(astray.isEmpty, "\(stretch.name): \(astray.count) of \(within.count) saves not on \(stretch.path): \(astray.map(\.operationID))")
            for instance in Self.instances {
                #expect(within.contains { $0.instance == instance }, "\(stretch.name): no save of \(instance)")
            }
        }
        for (service, instance) in zip(services, Self.instances) {
            let counts = await service.router.counts
            for path in [SavePath.legacy, .modern] {
                let inLedger = ledger.filter { $0.key.hasPrefix(instance + "-") && $0.value.path == path }.count
                #expect(counts.count(of: .committed, on: path) == inLedger,
                        "\(instance): its router committed \(counts.count(of: .committed, on: path)) on \(path), the ledger has \(inLedger)")
            }
        }

        let onOneRevision = Dictionary(grouping: saves) { "\($0.order)@\($0.expected)" }.filter { $0.value.count > 1 }
        #expect(onOneRevision.isEmpty, "saves made on the same revision of an order: \(onOneRevision.keys.sorted())")

        for order in Self.orders {
            guard let read = try await services[0].status(of: order) else {
                Issue.record("order \(order) is gone")
                continue
            }
            let last = saves.first { $0.order == order && $0.revision == read.revision }
            #expect(last?.status == read.status, "order \(order) reads \(read), which no acknowledged save left")
        }
    }

    @Test func theReadmeShowsThisCode() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here.appendingPathComponent("ReadmeOrderService.swift"), encoding: .utf8)
        func normalized(_ lines: some Sequence<Substring>) -> [String] {
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let code = source.split(separator: "\n").drop { !$0.contains("README \"Your own table\" begins") }.dropFirst()
            .prefix { !$0.contains("README \"Your own table\" ends") }
        let block = readme.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "### Your own table" }.drop { $0 != "```swift" }.dropFirst().prefix { $0 != "```" }
        #expect(!code.isEmpty)
        #expect(normalized(block) == normalized(code))
    }
}
