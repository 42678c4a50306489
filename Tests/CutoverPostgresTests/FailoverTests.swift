import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// Routers saving through a failover: on a real pg_auto_failover set with a synchronous
/// standby, reached by a multi-host URL with `target_session_attrs=read-write`.
@Suite("Routers through a failover", .serialized, .timeLimit(.minutes(20)))
struct FailoverTests {
    /// What the writers were told: per writer the revisions acknowledged, and every outcome.
    private final class Tally: Sendable {
        struct State {
            var acknowledged: [Int: [(operationID: String, revision: Int64)]] = [:]
            var outcomes: [String: Int] = [:]
            var acknowledgedAfterFailover = 0
        }
        let state = Mutex(State())
        let hasFailedOver = Atomic<Bool>(false)

        func acknowledge(writer: Int, operationID: String, revision: Int64, outcome: SaveOutcome) {
            state.withLock {
                $0.acknowledged[writer, default: []].append((operationID, revision))
                $0.outcomes[outcome.rawValue, default: 0] += 1
                if hasFailedOver.load(ordering: .sequentiallyConsistent) { $0.acknowledgedAfterFailover += 1 }
            }
        }

        func count(_ outcome: String) {
            state.withLock { $0.outcomes[outcome, default: 0] += 1 }
        }

        var total: Int { state.withLock { $0.acknowledged.values.map(\.count).reduce(0, +) } }
    }

    private static let writers = 4

    /// Saves to draft `failover-<writer>` revision after revision, each with its own operation
    /// ID, sending a save again with the same ID until it is answered; stops once `after` saves
    /// have been acknowledged since the failover. Returns an unexpected answer, if one came.
    private func write(_ writer: Int, router: SaveRouter, tally: Tally, after: Int) async throws -> String? {
        var revision: Int64 = 1
        var sinceFailover = 0
        while sinceFailover < after {
            let operationID = "w\(writer)-r\(revision)"
            let request = SaveDraft(operationScope: "failover", operationID: operationID, draftID: "failover-\(writer)",
                                    expectedRevision: revision, content: DraftContent(title: "writer \(writer) at \(revision + 1)"))
            let deadline = ContinuousClock.now + .seconds(180)
            while true {
                let failedOver = tally.hasFailedOver.load(ordering: .sequentiallyConsistent)
                do {
                    let result = try await router.saveReportingOutcome(request)
                    tally.acknowledge(writer: writer, operationID: operationID, revision: result.saved.revision, outcome: result.outcome)
                    revision = result.saved.revision
                    if failedOver { sinceFailover += 1 }
                    break
                } catch SaveFailure.outcomeUnknown {
                    tally.count("outcomeUnknown")
                } catch let failure as SaveFailure {
                    // A conflict here would mean an acknowledged save lost or one applied twice.
                    return "\(operationID): \(failure)"
                } catch let error as PostgresError {
                    tally.count("error \(error.code)")
                } catch {
                    return "\(operationID): \(error)"
                }
                guard ContinuousClock.now < deadline else { return "\(operationID): no answer within 180s" }
                // A client's pause before it sends the same save again, not a wait for an event.
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        return nil
    }

    @Test func savesAcrossAFailoverAreKeptOnceAndTheFleetFollowsTheNewPrimary() async throws {
        try await TestFailoverSet.use { set in
            let database = try await TestFailoverSet.database("failover_saves", on: set)
            try await onThread {
                let connection = try database.connect()
                try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
                try connection.query("""
                    INSERT INTO drafts (id, title, revision) SELECT 'failover-' || n, 'Seed ' || n, 1
                      FROM generate_series(0, \(Self.writers - 1)) AS n
                    """)
                let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(), options: .init(forceReaders: true))
                try runner.initialize()
                try runner.run(.expand)
                try runner.run(.switchModern)
            }
            let configuration = database.configuration(applicationName: "failover-app")
            let pool = PostgresPool(configuration: configuration, maximumConnections: Self.writers)
            // A save waits for a row as long as the failover may take (see the holder below).
            let store = try await PostgresDraftStore(pool: pool, lockTimeout: .seconds(600), outcomeFlushInterval: nil)
            let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts", pollInterval: .milliseconds(500))
            let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                    following: fleet)
            let epoch = fleet.current.epoch
            #expect(fleet.currentPath() == .modern)
            let old = try await onThread { try set.primary() }

            let tally = Tally()
            let writing = Task {
                try await withThrowingTaskGroup(of: String?.self) { group in
                    for writer in 0..<Self.writers {
                        group.addTask { try await self.write(writer, router: router, tally: tally, after: 10) }
                    }
                    return try await group.reduce(into: [String]()) { if let problem = $1 { $0.append(problem) } }
                }
            }
            let deadline = ContinuousClock.now + .seconds(120)
            while tally.total < 40 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try #require(tally.total >= 40, "the writers did not get going")
            // A session on the primary holds writer 0's draft, so that its next save waits for the
            // row there: the failover cuts a save in flight, however quickly the saves go. The
            // holder keeps the lock until its server goes down with the failover.
            let holder = TestFailoverSet.holdUntilFailover("SELECT 1 FROM drafts WHERE id = 'failover-0' FOR UPDATE", on: database)
            let saveWaits = try await eventually(within: .seconds(120)) {
                try await onThread {
                    try database.connect().query("""
                        SELECT count(*) AS n FROM pg_stat_activity
                         WHERE datname = current_database() AND application_name = 'failover-app' AND wait_event_type = 'Lock'
                        """)[0].decode(Int64.self, "n") > 0
                }
            }
            try #require(saveWaits, "writer 0's save never waited for the row the holder has")
            let began = try await onThread { try set.monitorNow() }
            let promoted = try await set.performFailover()
            let held = await holder.result
            #expect(throws: PostgresError.self) { try held.get() }
            tally.hasFailedOver.store(true, ordering: .sequentiallyConsistent)
            let problems = try await writing.value
            #expect(problems.isEmpty, "\(problems)")
            if !problems.isEmpty {
                // What pg_auto_failover did meanwhile, to tell a loss of its own from one of ours.
                let events = try await onThread { try set.events(since: began) }
                print("pg_auto_failover events since the failover began:\n" + events.joined(separator: "\n"))
            }
            #expect(promoted != old)

            let state = tally.state.withLock { $0 }
            let outcomes = state.outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("saves through the failover: \(outcomes); \(state.acknowledgedAfterFailover) acknowledged after it")
            // The failover cut writer 0's save in flight, and perhaps others, or refused new ones
            // for a while.
            #expect(state.outcomes.keys.contains { $0 == "outcomeUnknown" || $0.hasPrefix("error") }, "\(outcomes)")
            #expect(state.acknowledgedAfterFailover >= Self.writers * 10)

            // Every acknowledged save is on the new primary once, with its revision: each draft's
            // revisions acknowledged are 2, 3, … without a gap, the last is the draft's, and the
            // ledger holds exactly the operations acknowledged.
            let stored = try await onThread {
                let connection = try database.connect()
                let port = try connection.query("SELECT inet_server_port() AS port")[0].decode(Int.self, "port")
                let drafts = try connection.query("SELECT id, revision FROM drafts WHERE id LIKE 'failover-%'")
                    .map { (try $0.decode(String.self, "id"), try $0.decode(Int64.self, "revision")) }
                let ledger = try connection.query("SELECT operation_id, revision FROM cutover.operation_ledger WHERE scope = 'failover'")
                    .map { (try $0.decode(String.self, "operation_id"), try $0.decode(Int64.self, "revision")) }
                return (port: port, drafts: Dictionary(uniqueKeysWithValues: drafts), ledger: Dictionary(uniqueKeysWithValues: ledger))
            }
            #expect(stored.port == promoted.port)
            var acknowledgedOperations: [String: Int64] = [:]
            for writer in 0..<Self.writers {
                let revisions = (state.acknowledged[writer] ?? []).map(\.revision)
                #expect(revisions == Array(2..<Int64(2 + revisions.count)), "writer \(writer): \(revisions)")
                #expect(stored.drafts["failover-\(writer)"] == revisions.last, "writer \(writer)")
                for entry in state.acknowledged[writer] ?? [] { acknowledgedOperations[entry.operationID] = entry.revision }
            }
            #expect(stored.ledger == acknowledgedOperations)

            // The fleet kept its path and follows the new primary: a switch made there reaches it.
            #expect(fleet.currentPath() == .modern)
            #expect(fleet.current.epoch == epoch)
            let switched = try await onThread {
                try PhaseRunner(connection: database.connect(), source: try PlanSource.builtIn()).run(.switchLegacy).epoch
            }
            #expect(await fleet.waitForEpoch(switched, timeout: .seconds(30)))
            #expect(fleet.currentPath() == .legacy)
            await fleet.stop()
            try await store.outcomes.close()
            await pool.shutdown()
        }
    }
}
