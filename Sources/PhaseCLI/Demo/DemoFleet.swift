import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

/// One save the application was told had committed.
struct AcknowledgedSave: Sendable {
    var scope: String
    var operationID: String
    var draftID: String
    var revision: Int64
    var title: String
    /// Acknowledged while the rollback drill ran.
    var duringDrill: Bool
}

/// What the simulated fleet did, kept as it happens.
final class FleetLedger: Sendable {
    private struct State {
        var acknowledged: [AcknowledgedSave] = []
        var legacyUpdates: [String: Int64] = [:]
        var legacyInserts: [String] = []
        var retriedUnknown = 0
        var conflicts = 0
        var inDrill = false
    }

    private let state = Mutex(State())

    func acknowledge(_ save: SaveDraft, revision: Int64) {
        state.withLock {
            $0.acknowledged.append(AcknowledgedSave(scope: save.operationScope, operationID: save.operationID,
                                                    draftID: save.draftID, revision: revision, title: save.content.title,
                                                    duringDrill: $0.inDrill))
        }
    }

    func legacyUpdate(of draftID: String) { state.withLock { $0.legacyUpdates[draftID, default: 0] += 1 } }
    func legacyInsert(of draftID: String) { state.withLock { $0.legacyInserts.append(draftID) } }
    func retriedUnknown() { state.withLock { $0.retriedUnknown += 1 } }
    func conflict() { state.withLock { $0.conflicts += 1 } }
    func setDrill(_ on: Bool) { state.withLock { $0.inDrill = on } }

    var acknowledged: [AcknowledgedSave] { state.withLock { $0.acknowledged } }
    var legacyUpdates: [String: Int64] { state.withLock { $0.legacyUpdates } }
    var legacyInserts: [String] { state.withLock { $0.legacyInserts } }
    var retries: (unknown: Int, conflicts: Int) { state.withLock { ($0.retriedUnknown, $0.conflicts) } }
}

/// An old application version: plain SQL on `drafts(id, title, revision)`, knowing nothing of
/// Cutover but the reader registry's SQL heartbeat.
final class OldApplicationInstance: Sendable {
    let name: String
    private let stopped = Mutex(false)
    private let thread: JoinedThread
    /// Its registration's secret, as a non-Swift application would choose one at start.
    private let token = ReaderRegistry.makeToken()

    init(name: String, configuration: PostgresConfiguration, drafts: Int, ledger: FleetLedger) {
        self.name = name
        var named = configuration
        named.applicationName = name
        let configured = named
        thread = JoinedThread(named: name)
        thread.start { [self] in run(configuration: configured, drafts: drafts, ledger: ledger) }
    }

    /// Stops writing, leaves the registry and disconnects.
    func retire() async {
        stopped.withLock { $0 = true }
        await thread.ended.wait()
    }

    private func run(configuration: PostgresConfiguration, drafts: Int, ledger: FleetLedger) {
        guard let connection = try? PostgresConnection(configuration: configuration) else { return }
        var lastBeat = ContinuousClock.now - .seconds(10)
        var inserted = 0
        while !stopped.withLock({ $0 }) {
            do {
                if ContinuousClock.now - lastBeat > .seconds(1) {
                    try ReaderRegistry.heartbeat(instanceID: name, applicationName: "legacy-app", applicationVersion: "1.9",
                                                 formats: [DraftFormat.v1.rawValue], token: token, on: connection)
                    lastBeat = ContinuousClock.now
                }
                if Int.random(in: 0..<10) == 0 {
                    let id = "\(name)-new-\(inserted)"
                    try connection.query("INSERT INTO drafts (id, title, revision) VALUES (\(id), \("created by \(name)"), \(Int64(1)))")
                    ledger.legacyInsert(of: id)
                    inserted += 1
                } else {
                    let id = DemoData.draftID(Int.random(in: 1...drafts))
                    let rows = try connection.query("SELECT revision FROM drafts WHERE id = \(id)")
                    guard let revision = try rows.first?.decode(Int64.self, "revision") else { continue }
                    let updated = try connection.query("""
                        UPDATE drafts SET title = \("edited by \(name) at \(revision + 1)"), revision = revision + 1
                         WHERE id = \(id) AND revision = \(revision)
                        """).affectedRows
                    if updated == 1 { ledger.legacyUpdate(of: id) }
                }
                Thread.sleep(forTimeInterval: 0.005)
            } catch {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        _ = try? ReaderRegistry.leave(instanceID: name, token: token, on: connection)
    }
}

/// A current application instance: the router following the fleet writer path, over the
/// PostgreSQL store, registered as a reader of both formats, retrying unknown outcomes with
/// the same operation ID.
final class ModernApplicationInstance: Sendable {
    let name: String
    let router: SaveRouter
    let fleet: FleetWriterPath
    private let pool: PostgresPool
    private let store: PostgresDraftStore
    private let registration: ReaderRegistration
    private let loop = Mutex<Task<Void, Never>?>(nil)

    private init(name: String, router: SaveRouter, fleet: FleetWriterPath, pool: PostgresPool, store: PostgresDraftStore,
                 registration: ReaderRegistration) {
        self.name = name
        self.router = router
        self.fleet = fleet
        self.pool = pool
        self.store = store
        self.registration = registration
    }

    static func start(name: String, configuration: PostgresConfiguration) async throws -> ModernApplicationInstance {
        var configuration = configuration
        configuration.applicationName = name
        let pool = PostgresPool(configuration: configuration, maximumConnections: 3)
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: .seconds(1))
        let fleet = try await FleetWriterPath.start(configuration: configuration, pollInterval: .seconds(2))
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                following: fleet)
        let registration = try await ReaderRegistration(pool: pool, instanceID: name, applicationName: "drafts-app",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(1))
        return ModernApplicationInstance(name: name, router: router, fleet: fleet, pool: pool, store: store,
                                         registration: registration)
    }

    /// Starts saving: read a draft, save an edit; conflicts re-read, unknown outcomes retry.
    func startLoad(drafts: Int, ledger: FleetLedger) {
        let name = name
        let router = router
        let store = store
        let task = Task {
            var sequence = 0
            while !Task.isCancelled {
                sequence += 1
                let id = DemoData.draftID(Int.random(in: 1...drafts))
                do {
                    guard let current = try await store.read(id: id) else { continue }
                    var content = current.content
                    content.title = "saved by \(name) #\(sequence)"
                    content.body = "body \(sequence)"
                    let save = SaveDraft(operationScope: name, operationID: "op-\(sequence)", draftID: id,
                                         expectedRevision: current.revision, content: content)
                    let revision = try await Self.saveUntilKnown(save, router: router, ledger: ledger)
                    ledger.acknowledge(save, revision: revision)
                } catch SaveFailure.conflict {
                    ledger.conflict()
                } catch {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        loop.withLock { $0 = task }
    }

    /// Sends the same request, with the same operation ID, until the store gives an answer:
    /// a commit, a replay, or a refusal that committed nothing. A lost connection, a restarted
    /// server or a lock timeout is not an answer. It does not stop when cancelled, so that no
    /// save is left unknown.
    private static func saveUntilKnown(_ save: SaveDraft, router: SaveRouter, ledger: FleetLedger) async throws -> Int64 {
        while true {
            do {
                return try await router.save(save).revision
            } catch let failure as SaveFailure where failure != .outcomeUnknown {
                throw failure
            } catch let failure as DraftDecodingError {
                throw failure
            } catch {
                if case SaveFailure.outcomeUnknown = error { ledger.retriedUnknown() }
                await pause(.milliseconds(50))
            }
        }
    }

    /// A pause that a cancelled task still takes.
    private static func pause(_ duration: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + duration / .seconds(1)) { continuation.resume() }
        }
    }

    /// Stops saving (waiting for the save in flight) but stays registered.
    func stopLoad() async {
        let task = loop.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// Stops everything and leaves the registry.
    func shutdown() async {
        await stopLoad()
        try? await store.outcomes.close()
        try? await registration.stop()
        await fleet.stop()
        await pool.shutdown()
    }
}

/// Names and data shared by the demo's parts (and the soak, which runs the same fleet).
enum DemoData {
    static func draftID(_ number: Int) -> String { "draft-" + String(repeating: "0", count: max(0, 6 - String(number).count)) + String(number) }

    /// The legacy table as an old application version left it: drafts 1 to `rows`, named as
    /// ``draftID(_:)`` names them, each at revision 1.
    static func createLegacyTable(rows: Int, on connection: PostgresConnection) throws {
        try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
        try connection.query("""
            INSERT INTO drafts (id, title, revision) SELECT 'draft-' || lpad(n::text, 6, '0'), 'Draft ' || n, 1
              FROM generate_series(1, \(rows)) AS n
            """)
    }
}

/// Waits for `operation` at most `limit`: true when it finished, false when time ran out first
/// (it is then left running, and the process's exit ends it).
func finishes(within limit: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
    let answered = Mutex(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let answer = { @Sendable (finished: Bool) in
            let first = answered.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: finished) }
        }
        Task {
            await operation()
            answer(true)
        }
        Task {
            try? await Task.sleep(for: limit)
            answer(false)
        }
    }
}
