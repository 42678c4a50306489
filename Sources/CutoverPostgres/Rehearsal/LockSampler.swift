import Cutover
import Foundation
import PostgresClient
import Synchronization

/// Watches the table locks one server session holds, from a session of its own, while a
/// statement runs outside a transaction (or a backfill runs its batches): what `pg_locks`
/// shows every millisecond or so, strongest mode per relation.
///
/// Sampling can miss a lock held for less than one round trip; the statements a rehearsal
/// watches this way (`CREATE INDEX CONCURRENTLY`, a backfill) hold theirs for the whole build
/// or batch. The statements of a file in a transaction are read exactly instead
/// (``RehearsalProbe``).
final class LockSampler: Sendable {
    private struct State {
        var isStopping = false
        var seen: [String: LockMode] = [:]
        var failure: PostgresError?
    }

    private let configuration: PostgresConfiguration
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let running = Mutex(false)

    /// A sampler that connects with `configuration` (the scratch database's).
    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// Starts watching the session `pid`.
    func start(watching pid: Int32) {
        state.withLock { $0 = State() }
        running.withLock { $0 = true }
        let configuration = configuration
        let thread = Thread { [self] in
            defer { finished.signal() }
            do {
                let session = try PostgresConnection(configuration: configuration)
                while !state.withLock({ $0.isStopping }) {
                    let rows = try session.query("""
                        SELECT coalesce((SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = l.relation), l.relation::text) AS relation, l.mode FROM pg_locks l
                         WHERE l.pid = \(pid) AND l.locktype = 'relation' AND l.granted AND l.relation >= 16384
                        """)
                    let locks = try rows.compactMap { row -> (String, LockMode)? in
                        guard let mode = LockMode(pgLocksMode: try row.decode(String.self, "mode")) else { return nil }
                        return (try row.decode(String.self, "relation"), mode)
                    }
                    state.withLock { state in
                        for (relation, mode) in locks where !relation.allSatisfy(\.isNumber) {
                            state.seen[relation] = max(state.seen[relation] ?? mode, mode)
                        }
                    }
                    Thread.sleep(forTimeInterval: 0.001)
                }
            } catch let error as PostgresError {
                state.withLock { $0.failure = error }
            } catch {
                state.withLock { $0.failure = PostgresError(code: .unexpectedResponse, message: "the lock sampler stopped: \(error)") }
            }
        }
        thread.name = "cutover-lock-sampler"
        thread.start()
    }

    /// Stops watching and returns every lock seen, by relation, in name order.
    ///
    /// - Throws: the error that ended the sampling session early: without it, the locks the
    ///   statement took would be reported as none.
    func stop() throws -> [StatementObservation.RelationLock] {
        guard running.withLock({ running in defer { running = false }; return running }) else { return [] }
        state.withLock { $0.isStopping = true }
        finished.wait()
        return try state.withLock { state in
            if let failure = state.failure { throw failure }
            return state.seen.sorted { $0.key < $1.key }.map { StatementObservation.RelationLock(relation: $0.key, mode: $0.value) }
        }
    }
}
