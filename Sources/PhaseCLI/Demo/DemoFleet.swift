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
        var failures: [LoadFailure: Int] = [:]
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

    /// Counts a read or save of the load that threw `error`: a conflict, or a failure.
    ///
    /// - Returns: the failure, or nil for a conflict.
    @discardableResult
    func record(_ error: any Error) -> LoadFailure? {
        let failure = LoadFailure.of(error)
        if let failure { record(failure) } else { state.withLock { $0.conflicts += 1 } }
        return failure
    }

    /// Counts a failure that no error stands for (a save given up, a load that did not stop).
    func record(_ failure: LoadFailure) { state.withLock { $0.failures[failure, default: 0] += 1 } }
    func setDrill(_ on: Bool) { state.withLock { $0.inDrill = on } }

    var acknowledged: [AcknowledgedSave] { state.withLock { $0.acknowledged } }
    var legacyUpdates: [String: Int64] { state.withLock { $0.legacyUpdates } }
    var legacyInserts: [String] { state.withLock { $0.legacyInserts } }
    /// Failed attempts of the load, by kind and code.
    var failures: [LoadFailure: Int] { state.withLock { $0.failures } }
    var retries: (unknown: Int, conflicts: Int) {
        state.withLock { ($0.failures[LoadFailure(kind: .lost, code: SaveOutcome.outcomeUnknown.rawValue)] ?? 0, $0.conflicts) }
    }
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
                    try ReaderRegistry.heartbeat(plan: "drafts", instanceID: name, applicationName: "legacy-app", applicationVersion: "1.9",
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
        _ = try? ReaderRegistry.leave(plan: "drafts", instanceID: name, token: token, on: connection)
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
