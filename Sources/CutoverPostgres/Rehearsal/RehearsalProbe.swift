import Cutover
import Foundation
import PostgresClient
import Synchronization

/// Observes every statement a rehearsal's runner sends to the scratch copy of the table: the
/// locks it took (read from `pg_locks` in its own transaction right after it, or sampled for a
/// statement outside a transaction), whether it replaced a relation's file, the indexes it
/// built, the constraints it validated, the rows it visited, its time and its WAL.
///
/// The WAL is the session's own where the server counts it per session (PostgreSQL 18's
/// `pg_stat_get_backend_wal`) and the statement runs outside a transaction: a session's count
/// is brought up to date only between transactions. Elsewhere it is all the server inserted
/// while the statement ran (`pg_current_wal_insert_lsn`), other sessions' WAL included, and
/// the observation says so.
final class RehearsalProbe: StatementObserver {
    /// What the server showed of the table and the session at one moment.
    private struct Reading: Decodable {
        var lsn: String
        var table: String?
        var locks: [[String]]
        var files: [String: Int64]
        var constraints: [String: Bool]
        var visited: Int64?

        /// Strongest mode per relation.
        var lockModes: [String: LockMode] {
            var modes: [String: LockMode] = [:]
            // A relation made and dropped inside the statement (a rewrite's new heap) has no name left.
            for pair in locks where pair.count == 2 && !pair[0].allSatisfy(\.isNumber) {
                guard let mode = LockMode(pgLocksMode: pair[1]) else { continue }
                modes[pair[0]] = max(modes[pair[0]] ?? mode, mode)
            }
            return modes
        }
    }

    private struct State {
        var label: String?
        var step = ""
        var file: String?
        var isInTransaction = true
        var transaction = 0
        var before: Reading?
        var sessionWALBefore: Int64?
        var started = ContinuousClock.now
        var observations: [StatementObservation] = []
    }

    private let tableOID: Int64
    private let sampler: LockSampler
    private let state = Mutex(State())
    /// Whether the server counts each session's WAL (`pg_stat_get_backend_wal`).
    let countsSessionWAL: Bool

    /// A probe of the scratch table `tableOID`, sampling with sessions opened by `configuration`;
    /// `countsSessionWAL` says whether the server counts each session's WAL.
    init(tableOID: Int64, configuration: PostgresConfiguration, countsSessionWAL: Bool) {
        self.tableOID = tableOID
        self.sampler = LockSampler(configuration: configuration)
        self.countsSessionWAL = countsSessionWAL
    }

    /// Whether the server `connection` is on counts each session's WAL: PostgreSQL 18 and later.
    static func countsSessionWAL(on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT to_regprocedure('pg_catalog.pg_stat_get_backend_wal(integer)') IS NOT NULL AS counts")[0]
            .decode(Bool.self, "counts")
    }

    /// The WAL `connection`'s own session has written so far, up to date: the session's
    /// counts reach the server's statistics when it goes idle outside a transaction, which
    /// `pg_stat_force_next_flush` makes happen after this first statement, before the reading.
    /// Only outside a transaction, on a server that ``countsSessionWAL(on:)``.
    static func sessionWALBytes(on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT pg_stat_force_next_flush()")
        return try connection.query("SELECT wal_bytes::bigint AS bytes FROM pg_stat_get_backend_wal(pg_backend_pid())")[0]
            .decode(Int64.self, "bytes")
    }

    /// The step the statements from now on belong to, as the report names it (`expand (2)`).
    func stepStarts(_ label: String) {
        state.withLock { $0.label = label }
    }

    /// Every observation so far, in order.
    var observations: [StatementObservation] { state.withLock { $0.observations } }

    /// Adds an observation made by the rehearsal itself (a backfill, watched as a whole).
    func record(_ observation: StatementObservation) {
        state.withLock { $0.observations.append(observation) }
    }

    /// A new transaction number, for an observation the rehearsal records itself.
    func nextTransaction() -> Int {
        state.withLock { state in
            state.transaction += 1
            return state.transaction
        }
    }

    func fileStarts(_ file: String, step: String, isInTransaction: Bool) {
        state.withLock { state in
            state.step = state.label ?? step
            state.file = file
            state.isInTransaction = isInTransaction
            state.transaction += 1
        }
    }

    func statementStarts(_ statement: String, on connection: PostgresConnection) throws {
        let inTransaction = state.withLock { $0.isInTransaction }
        let sessionWAL = try (!inTransaction && countsSessionWAL ? Self.sessionWALBytes(on: connection) : nil)
        let reading = try read(on: connection)
        state.withLock { state in
            state.before = reading
            state.sessionWALBefore = sessionWAL
            state.started = .now
        }
        if !inTransaction { sampler.start(watching: connection.backendPID) }
    }

    func statementEnded(_ statement: String, on connection: PostgresConnection, error: (any Error)?) throws {
        let ended = ContinuousClock.now
        let (before, started, inTransaction, sessionWALBefore) = state.withLock { ($0.before, $0.started, $0.isInTransaction, $0.sessionWALBefore) }
        var sampled: [StatementObservation.RelationLock] = []
        if !inTransaction {
            do {
                sampled = try sampler.stop()
            } catch where error != nil {
                // The statement failed too: its own error is the one that counts.
            }
        }
        let microseconds = Int64(((ended - started) / .microseconds(1)).rounded())
        // After an error the transaction takes no query; what can be known is its time.
        let after = (error != nil && inTransaction) ? nil : try read(on: connection)
        var locks: [StatementObservation.RelationLock] = sampled
        var rewritten: [String] = []
        var built: [String] = []
        var validated: [String] = []
        var wal: Int64 = 0
        var walScope = StatementObservation.WALScope.serverWide
        var visited: Int64?
        if let before, let after {
            if inTransaction {
                let previous = before.lockModes
                locks = after.lockModes.filter { relation, mode in (previous[relation].map { mode > $0 } ?? true) }
                    .sorted { $0.key < $1.key }.map { .init(relation: $0.key, mode: $0.value) }
                if let was = before.visited, let now = after.visited { visited = now - was } else if let now = after.visited { visited = now }
            }
            rewritten = after.files.filter { name, node in before.files[name].map { $0 != node } ?? false }.map(\.key).sorted()
            built = after.files.keys.filter { before.files[$0] == nil && $0 != after.table }.sorted()
            // Added already validated: new, and valid at once (not NOT VALID, then VALIDATE).
            validated = after.constraints.filter { name, isValid in isValid && before.constraints[name] == nil }.map(\.key).sorted()
            if let sessionWALBefore {
                wal = try Self.sessionWALBytes(on: connection) - sessionWALBefore
                walScope = .session
            } else {
                wal = try walBytes(from: before.lsn, to: after.lsn, on: connection)
            }
        }
        let message = error.map { ($0 as? PostgresError)?.description ?? "\($0)" }
        state.withLock { state in
            state.observations.append(StatementObservation(
                step: state.step, file: state.file, transaction: state.transaction, isInTransaction: inTransaction,
                statement: statement, locks: locks, isLockSampled: !inTransaction, microseconds: microseconds,
                rowsVisited: visited, walBytes: wal, walScope: walScope, rewritten: rewritten,
                indexesBuilt: built, constraintsValidated: validated, error: message))
        }
    }

    func fileEnded(isCommitted: Bool) {
        // A sampler still running here belongs to a statement that failed, whose error is the
        // one that counts; its own is not wanted on top.
        do { _ = try sampler.stop() } catch {}
    }

    /// Starts sampling the locks of session `pid` (for a step watched as a whole).
    func startSampling(_ pid: Int32) { sampler.start(watching: pid) }
    /// Stops sampling and returns what it saw.
    func stopSampling() throws -> [StatementObservation.RelationLock] { try sampler.stop() }

    private func read(on connection: PostgresConnection) throws -> Reading {
        let oid = tableOID
        let row = try connection.query("""
            SELECT jsonb_build_object(
              'lsn', pg_current_wal_insert_lsn()::text,
              'table', (SELECT format('%I.%I', (SELECT n.nspname FROM pg_namespace n WHERE n.oid = c.relnamespace), c.relname) FROM pg_class c WHERE c.oid = \(oid)::oid),
              'locks', coalesce((SELECT jsonb_agg(jsonb_build_array(coalesce((SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = l.relation), l.relation::text), l.mode)) FROM pg_locks l
                                  WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted AND l.relation >= 16384), '[]'),
              'files', coalesce((SELECT jsonb_object_agg(format('%I.%I', (SELECT n.nspname FROM pg_namespace n WHERE n.oid = c.relnamespace), c.relname), pg_relation_filenode(c.oid)::bigint) FROM pg_class c
                                  WHERE c.oid = \(oid)::oid OR c.oid IN (SELECT i.indexrelid FROM pg_index i WHERE i.indrelid = \(oid)::oid)), '{}'),
              'constraints', coalesce((SELECT jsonb_object_agg(c.conname, c.convalidated) FROM pg_constraint c
                                        WHERE c.conrelid = \(oid)::oid AND c.contype IN ('c', 'f')), '{}'),
              'visited', (SELECT s.seq_tup_read + coalesce(s.idx_tup_fetch, 0) + s.n_tup_ins + s.n_tup_upd + s.n_tup_del
                            FROM pg_stat_xact_user_tables s WHERE s.relid = \(oid)::oid)) AS reading
            """)[0]
        return try row.decodeJSON(Reading.self, "reading")
    }

    private func walBytes(from before: String, to after: String, on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT pg_wal_lsn_diff(\(after)::pg_lsn, \(before)::pg_lsn)::bigint AS bytes")[0].decode(Int64.self, "bytes")
    }
}
