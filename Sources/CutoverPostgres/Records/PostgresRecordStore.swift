import Cutover
import PostgresClient
import Synchronization

/// The durable commit boundary for any plan's entity: its table and the plan's operation ledger in PostgreSQL.
///
/// What ``PostgresDraftStore`` is for drafts, for every ``RecordEntity``. Each save is one
/// transaction at READ COMMITTED sent in one round trip (a call of the writer path's own save
/// function or of `cutover.save_record` and a Sync, pipelined; the server commits at the Sync):
/// the function claims (scope, operation ID) in
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
    public var pool: PostgresPool { sender.pool }
    /// How long a save waits for another transaction's lock (a save of the same operation or of
    /// the same record still in flight) before giving up with ``RecordStoreError/lockTimeout``.
    public let lockTimeout: Duration
    /// What the save does once the request is checked and encoded: the same for every entity.
    @usableFromInline let sender: RecordSaveSender

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
        self.lockTimeout = lockTimeout
        sender = try await RecordSaveSender(pool: pool, plan: Entity.planName, keyColumns: Entity.keyColumns,
                                            lockTimeout: lockTimeout, logger: logger)
        outcomes = OutcomeRecorder(pool: pool, plan: Entity.planName, flushInterval: outcomeFlushInterval, logger: logger)
    }

    /// Commits or replays one save, and counts its outcome; see ``RecordStorage``.
    ///
    /// Inlinable, with the request's checks and encoding, so that it is compiled for the
    /// entity in the caller's module; the rest is ``RecordSaveSender``'s, compiled once.
    @inlinable
    public func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) async throws
        -> RecordSaveResult<Entity> {
        do {
            try request.validate()
            let answer = try await sender.send(scope: request.operationScope, operationID: request.operationID, key: request.key,
                                               expected: request.expectedRevision, write: write,
                                               request: request.canonicalEncoding, path: path)
            let saved = SavedRecord<Entity>(key: request.key, content: request.content, revision: answer.revision)
            let result: RecordSaveResult<Entity> = answer.isReplay ? .replayed(saved) : .committed(saved)
            outcomes.record(result.outcome, on: path)
            return result
        } catch let failure as SaveFailure {
            outcomes.record(failure.outcome, on: path)
            throw failure
        } catch {
            // Outside the contract's outcomes (a lock timeout, a format the table does not hold,
            // a connection that broke before anything could commit): nothing committed.
            outcomes.recordError(on: path)
            throw error
        }
    }
}
