import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

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

    /// How long one save is retried without an answer before it is given up (and counted so):
    /// less than the minute the demo and the soak wait for the load to stop.
    static let answerBound: Duration = .seconds(45)

    private init(name: String, router: SaveRouter, fleet: FleetWriterPath, pool: PostgresPool, store: PostgresDraftStore,
                 registration: ReaderRegistration) {
        self.name = name
        self.router = router
        self.fleet = fleet
        self.pool = pool
        self.store = store
        self.registration = registration
    }

    /// Starts an instance; `fleetEvents` hears what its fleet writer path reports, with the
    /// instance's name. `listenTo`, when given, is a direct connection for LISTEN, for an
    /// instance whose `configuration` goes through a transaction pooler. `logger` hears of the
    /// store's and the registration's background failures.
    static func start(name: String, configuration: PostgresConfiguration, listenTo: PostgresConfiguration? = nil,
                      fleetEvents: @escaping @Sendable (String, FleetWriterPath.Event) -> Void = { _, _ in },
                      logger: CutoverLogger = .disabled)
        async throws -> ModernApplicationInstance {
        var configuration = configuration
        configuration.applicationName = name
        let pool = PostgresPool(configuration: configuration, maximumConnections: 3)
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: .seconds(1), logger: logger)
        var listening = FleetWriterPath.Listening.onReadConnection
        if var direct = listenTo {
            direct.applicationName = name + "-listen"
            listening = .direct(direct)
        }
        let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts", listening: listening, pollInterval: .seconds(2),
                                                    log: { fleetEvents(name, $0) })
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                following: fleet)
        let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: name, applicationName: "drafts-app",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(1),
                                                        following: fleet, logger: logger)
        return ModernApplicationInstance(name: name, router: router, fleet: fleet, pool: pool, store: store,
                                         registration: registration)
    }

    /// Starts saving, one edit after another, until ``stopLoad()``.
    func startLoad(drafts: Int, ledger: FleetLedger) {
        let task = Task { [self] in
            var sequence = 0
            while !Task.isCancelled {
                sequence += 1
                await edit(sequence: sequence, drafts: drafts, ledger: ledger)
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        loop.withLock { $0 = task }
    }

    /// One edit of the load: read a random draft, save a change to it through the router as
    /// operation `op-<sequence>`, and tell `ledger` what came of it (an acknowledged save, a
    /// conflict, or a failure).
    func edit(sequence: Int, drafts: Int, ledger: FleetLedger) async {
        let id = DemoData.draftID(Int.random(in: 1...drafts))
        let found: (content: DraftContent, revision: Int64)?
        do {
            found = try await store.read(id: id)
        } catch {
            ledger.record(error)
            try? await Task.sleep(for: .milliseconds(50))
            return
        }
        guard let current = found else {
            ledger.record(LoadFailure(kind: .refused, code: "draftMissing"))
            return
        }
        var content = current.content
        content.title = "saved by \(name) #\(sequence)"
        content.body = "body \(sequence)"
        let save = SaveDraft(operationScope: name, operationID: "op-\(sequence)", draftID: id,
                             expectedRevision: current.revision, content: content)
        do {
            ledger.acknowledge(save, revision: try await saveUntilAnswered(save, ledger: ledger))
        } catch {
            // Counted by saveUntilAnswered: a conflict, a refusal, or a save given up.
        }
    }

    /// Sends the same request, with the same operation ID, until the store gives an answer:
    /// a commit, a replay, or a refusal that committed nothing. A lost connection, a restarted
    /// server or a lock timeout is not an answer, and is counted and retried, for at most
    /// ``answerBound``. It does not stop when cancelled, so that no save is left unknown.
    private func saveUntilAnswered(_ save: SaveDraft, ledger: FleetLedger) async throws -> Int64 {
        let deadline = ContinuousClock.now + Self.answerBound
        while true {
            do {
                return try await router.save(save).revision
            } catch {
                guard ledger.record(error)?.kind == .lost else { throw error }
                guard ContinuousClock.now < deadline else {
                    ledger.record(LoadFailure(kind: .unanswered, code: "no answer within \(DurationText.format(Self.answerBound))"))
                    throw error
                }
                await Self.pause(.milliseconds(50))
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
