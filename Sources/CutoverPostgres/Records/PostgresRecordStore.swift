import Cutover
import PostgresClient
import Synchronization

/// The durable commit boundary for any plan's entity: its table and the plan's operation ledger in PostgreSQL.
///
/// What ``PostgresDraftStore`` is for drafts, for every ``RecordEntity``. Each save is one
/// transaction at READ COMMITTED sent in one round trip (BEGIN, a call of the plan's own save
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
    /// The call of the plan's own save function (`cutover.make_record_save`), read from the
    /// plan's registration when the store is made; nil to call `cutover.save_record`, which
    /// calls the same function for one more statement's cost.
    private let ownSaveSQL: Mutex<String?>

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
        let function = try await pool.withConnection { connection in
            try ControlSchema.verify(on: connection)
            return try Self.ownSaveFunction(on: connection, logger: logger)
        }
        ownSaveSQL = Mutex(function.map(Self.ownSaveSQL))
        outcomes = OutcomeRecorder(pool: pool, plan: Entity.planName, flushInterval: outcomeFlushInterval, logger: logger)
    }

    /// The plan's own save function as its registration names it, or nil when it has none yet
    /// or the role may not read the registration (sql/roles/grant_application.sql grants it).
    private static func ownSaveFunction(on connection: PostgresConnection, logger: CutoverLogger) throws -> String? {
        let name: String?
        do {
            name = try connection.query(
                "SELECT save_function FROM cutover.record_plans WHERE plan = \(Entity.planName)"
            ).first?.decode(String?.self, "save_function")
        } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
            logger.log(.notice, "record store: the role may not read the plan's registration; saves call cutover.save_record",
                       metadata: ["plan": Entity.planName])
            return nil
        }
        // Made by make_record_save: cutover.save_record_ and lower-case letters, digits and underscores.
        guard let name, name.hasPrefix("cutover.save_record_"),
              name.utf8.dropFirst("cutover.".utf8.count).allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F })
        else { return nil }
        return name
    }

    /// The call of `function`: the parameters of ``saveSQL`` without the plan.
    static func ownSaveSQL(_ function: String) -> String {
        "SELECT outcome, revision FROM \(function)($1, $2, $3, $4, $5, $6, $7, $8)"
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
        let outcome = try row.decode(String.self, "outcome")
        let saved = { (revision: Int64) in SavedRecord<Entity>(key: request.key, content: request.content, revision: revision) }
        switch outcome {
        case "committed": return .committed(saved(try row.decode(Int64.self, "revision")))
        case "replayed": return .replayed(saved(try row.decode(Int64.self, "revision")))
        case "operationConflict": throw SaveFailure.operationConflict
        default: throw PostgresError(code: .unexpectedResponse, message: "cutover.save_record returned outcome \(outcome)")
        }
    }

    /// Sends one save, with ``saveSQL``'s parameters but the plan, to the plan's own save
    /// function, or to `cutover.save_record` when there is none; returns the function's row.
    private func send(_ binds: [PostgresBind]) async throws -> PostgresRow {
        if let own = ownSaveSQL.withLock({ $0 }) {
            do {
                return try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: own, binds: binds))[0]
            } catch let error as PostgresError where error.sqlState == .undefinedFunction || error.sqlState == .insufficientPrivilege {
                // The function is gone (its table was dropped) or not granted: the call never
                // ran, so nothing was claimed, and the same save goes through save_record.
                ownSaveSQL.withLock { $0 = nil }
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
