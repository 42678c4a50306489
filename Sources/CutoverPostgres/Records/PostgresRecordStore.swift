import Cutover
import PostgresClient
import Synchronization

/// The durable commit boundary for any plan's entity: its table and the plan's operation ledger in PostgreSQL.
///
/// What ``PostgresDraftStore`` is for drafts, for every ``RecordEntity``. Each save is one
/// transaction at READ COMMITTED sent in one round trip (BEGIN, a call of the writer path's own save
/// function or of `cutover.save_record`, and COMMIT, pipelined): the function claims (scope, operation ID) in
/// the entity's plan's ledger first, replaying an identical request's result (same sha256 of
/// ``SaveRequest/canonicalEncoding``, whichever path sent it) or refusing a different one
/// with ``SaveFailure/operationConflict``, and then writes conditionally on the expected
/// revision; a write that does not apply raises (``SaveFailure/conflict(expected:current:)``
/// with the current revision, ``SaveFailure/notFound``, ``SaveFailure/exhausted``), so the
/// claim rolls back with it. A connection lost before the server answered is
/// ``SaveFailure/outcomeUnknown``: retry with the same operation ID and the ledger replays.
///
/// The legacy path writes the legacy format's columns and the modern path the modern
/// format's, as the entity's codecs encode them; the plan's sync trigger derives the other
/// format's columns while both exist (the modern path declares itself to it). A path whose
/// columns the table does not have at its phase is refused with
/// ``RecordStoreError/formatNotStored(_:)``. The plan's table, key and revision column come
/// from its registration (`phase init`, or `cutover.register_record_plan`); without a
/// revision column the revision is the row's `xmin` (docs/store.md states its limits).
///
/// ```swift
/// let store = try await PostgresRecordStore<Orders>(pool: pool)
/// let router = RecordRouter(legacy: RecordAdapter(storage: store, path: .legacy),
///                           modern: RecordAdapter(storage: store, path: .modern),
///                           following: fleet)
/// let saved = try await router.save(request)
/// ```
public final class PostgresRecordStore<Entity: RecordEntity>: RecordStorage, Sendable {
    /// The pool the store saves through.
    public let pool: PostgresPool
    /// How long a save waits for another transaction's lock (a save of the same operation or of
    /// the same record still in flight) before giving up with ``RecordStoreError/lockTimeout``.
    public let lockTimeout: Duration
    private let lockTimeoutBind: PostgresBind
    /// The plan's own save functions (`cutover.make_record_save`), read from the plan's
    /// registration when the store is made and again, at most every ``registrationRefresh``,
    /// while a path has none (a step such as expand makes them); and when they were read.
    private let functions: Mutex<(functions: RecordSaveFunctions, readAt: ContinuousClock.Instant)>
    private let logger: CutoverLogger
    /// How often a path without a function of its own looks for one again.
    static var registrationRefresh: Duration { .seconds(10) }

    /// Counts of outcomes per path and minute, written to `cutover.outcome_log` under the
    /// entity's plan in the background, for `phase observe`.
    public let outcomes: OutcomeRecorder

    /// Makes a store over `pool`, after checking that the database's control schema is the one
    /// this binary knows.
    ///
    /// - Parameters:
    ///   - lockTimeout: the longest a save waits for a lock held by another save.
    ///   - outcomeFlushInterval: how often outcome counts are written; nil writes them only
    ///     when ``OutcomeRecorder/flush()`` is called.
    ///   - logger: hears of each background flush of the outcome counts that fails.
    /// - Throws: ``ControlSchemaError`` when the control schema is missing or of another
    ///   version; a connection error.
    public init(pool: PostgresPool, lockTimeout: Duration = .seconds(5),
                outcomeFlushInterval: Duration? = .seconds(5), logger: CutoverLogger = .disabled) async throws {
        self.pool = pool
        self.lockTimeout = lockTimeout
        lockTimeoutBind = SaveFunctionFailure.lockTimeoutMilliseconds(lockTimeout)
        let functions = try await pool.withConnection { connection in
            try ControlSchema.verify(on: connection)
            return try RecordSaveFunctions.read(plan: Entity.planName, keyColumns: Entity.keyColumns.map(\.name),
                                                on: connection, logger: logger)
        }
        self.functions = Mutex((functions, ContinuousClock.now))
        self.logger = logger
        outcomes = OutcomeRecorder(pool: pool, plan: Entity.planName, flushInterval: outcomeFlushInterval, logger: logger)
    }

    /// Commits or replays one save, and counts its outcome; see ``RecordStorage``.
    public func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) async throws
        -> RecordSaveResult<Entity> {
        // A closure, not the key path `\.outcome`: a key path into a generic type is built again
        // at every call, which cost more than the rest of the client's work on a save.
        try await outcomes.counting(on: path, outcome: { $0.outcome }) { try await perform(request, write: write, path: path) }
    }

    private func perform(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) async throws
        -> RecordSaveResult<Entity> {
        try request.validate()
        if let typed = await pathFunction(path), let binds = typed.binds(
            scope: request.operationScope, operationID: request.operationID, key: request.key,
            expected: request.expectedRevision, write: write, request: request.canonicalEncoding, lockTimeout: lockTimeoutBind) {
            do {
                let row = try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: typed.sql, binds: binds))[0]
                return try Self.result(of: row, for: request)
            } catch let error as PostgresError where RecordSaveFunctions.isOutOfDate(error) {
                // The call never ran as made (nothing was claimed): forget the function, and
                // send the same save as JSON, which finds the table as it is now.
                functions.withLock { $0.functions[path] = nil }
            } catch let error as PostgresError {
                throw Self.failure(for: error, expected: request.expectedRevision)
            }
        }
        let binds = [
            request.operationScope.postgresBind, request.operationID.postgresBind,
            PostgresBind(utf8Text: RecordJSON.key(request.key, columns: Entity.keyColumns), type: .jsonb),
            request.expectedRevision.postgresBind, path.rawValue.postgresBind,
            PostgresBind(utf8Text: RecordJSON.columns(write), type: .jsonb),
            PostgresBind(bytea: request.canonicalEncoding), lockTimeoutBind,
        ]
        let row: PostgresRow
        do {
            row = try await send(binds)
        } catch let error as PostgresError {
            throw Self.failure(for: error, expected: request.expectedRevision)
        }
        return try Self.result(of: row, for: request)
    }

    /// The save's result from the function's row.
    private static func result(of row: PostgresRow, for request: SaveRequest<Entity>) throws -> RecordSaveResult<Entity> {
        let outcome = try row.decode(String.self, "outcome")
        let saved = { (revision: Int64) in SavedRecord<Entity>(key: request.key, content: request.content, revision: revision) }
        switch outcome {
        case "committed": return .committed(saved(try row.decode(Int64.self, "revision")))
        case "replayed": return .replayed(saved(try row.decode(Int64.self, "revision")))
        case "operationConflict": throw SaveFailure.operationConflict
        default: throw PostgresError(code: .unexpectedResponse, message: "cutover.save_record returned outcome \(outcome)")
        }
    }

    /// The function of `path`; while it has none, the registration is read again at most
    /// every ``registrationRefresh``, so that a store made before expand finds the modern path's.
    private func pathFunction(_ path: SavePath) async -> RecordSaveFunctions.PathFunction? {
        let (known, due) = functions.withLock { state in
            (state.functions[path], ContinuousClock.now - state.readAt >= Self.registrationRefresh)
        }
        if known != nil || !due { return known }
        functions.withLock { $0.readAt = ContinuousClock.now }
        do {
            let read = try await pool.withConnection { connection in
                try RecordSaveFunctions.read(plan: Entity.planName, keyColumns: Entity.keyColumns.map(\.name),
                                             on: connection, logger: self.logger)
            }
            functions.withLock { $0.functions = read }
            return read[path]
        } catch {
            // The save goes on as JSON; the next look is as far off as after a read.
            logger.log(.notice, "record store: reading the plan's registration failed: \(error)", metadata: ["plan": Entity.planName])
            return nil
        }
    }

    /// Sends one save, with ``saveSQL``'s parameters but the plan, to the plan's own save
    /// function, or to `cutover.save_record` when there is none; returns the function's row.
    private func send(_ binds: [PostgresBind]) async throws -> PostgresRow {
        if let own = functions.withLock({ $0.functions.ownSQL }) {
            do {
                return try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: own, binds: binds))[0]
            } catch let error as PostgresError where error.sqlState == .undefinedFunction || error.sqlState == .insufficientPrivilege {
                // The function is gone (its table was dropped) or not granted: the call never
                // ran, so nothing was claimed, and the same save goes through save_record.
                functions.withLock { $0.functions.ownSQL = nil }
            }
        }
        return try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: Self.saveSQL, binds: [Entity.planName.postgresBind] + binds))[0]
    }

    /// One save; the parameters are plan, scope, operation ID, key, expected revision, path,
    /// columns, canonical request and lock timeout.
    static var saveSQL: String { "SELECT outcome, revision FROM cutover.save_record($1, $2, $3, $4, $5, $6, $7, $8, $9)" }

    /// Maps the save function's raised outcomes and the connection's failures to the contract.
    static func failure(for error: PostgresError, expected: Int64) -> any Error {
        SaveFunctionFailure.failure(for: error, expected: expected) { error in
            switch error.sqlState {
            case .formatNotStored?: RecordStoreError.formatNotStored(error.message)
            case .entityNotUsable?: RecordStoreError.entityNotUsable(error.message)
            case .lockNotAvailable?: RecordStoreError.lockTimeout
            default: nil
            }
        }
    }
}

extension SQLState {
    /// CU006: the plan's entity cannot be saved: not registered, or its table or revision column missing.
    static let entityNotUsable = SQLState(rawValue: "CU006")
}
