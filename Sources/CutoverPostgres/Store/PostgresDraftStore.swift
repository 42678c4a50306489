import Cutover
import Foundation
import PostgresClient

/// The durable commit boundary: drafts and the operation ledger in PostgreSQL.
///
/// Each save is one transaction at READ COMMITTED, sent in one round trip (a call of
/// `cutover.save_draft` and a Sync, pipelined; the server commits at the Sync): the function claims (scope, operation ID) in
/// the ledger first, replaying an identical request's result or refusing a different one, and
/// then makes the conditional write; a write that does not apply raises, so the claim rolls
/// back with it. A connection lost before the server answered is ``SaveFailure/outcomeUnknown``:
/// retry with the same operation ID and the ledger replays the original result.
///
/// The legacy path writes the v1 representation (`title`), the modern path the v2 document
/// (and `title`, while it exists), whatever phase the table is in; a path whose format the
/// table does not hold is refused with ``DraftStoreError/formatNotStored(_:)``.
///
/// ```swift
/// let store = try await PostgresDraftStore(pool: pool)
/// let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store),
///                         modern: ModernDraftAdapter(storage: store))
/// let saved = try await router.save(request)
/// ```
public final class PostgresDraftStore: DraftStorage, ReportingDraftWriting, Sendable {
    /// The pool the store saves through.
    public let pool: PostgresPool
    /// How long a save waits for another transaction's lock (a save of the same operation or
    /// of the same draft still in flight) before giving up with ``DraftStoreError/lockTimeout``.
    public let lockTimeout: Duration
    /// ``lockTimeout`` as the save function's parameter.
    private let lockTimeoutBind: PostgresBind

    /// Counts of outcomes per path and minute, written to `cutover.outcome_log` in the background.
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
        self.lockTimeoutBind = SaveFunctionFailure.lockTimeoutMilliseconds(lockTimeout)
        try await pool.withConnection { try ControlSchema.verify(on: $0, for: .application) }
        self.outcomes = OutcomeRecorder(pool: pool, plan: "drafts", flushInterval: outcomeFlushInterval, logger: logger)
    }

    /// Commits or replays one save; see ``DraftStorage``.
    public func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult {
        try await outcomes.counting(on: path, outcome: \.outcome) { try await perform(request, write: write, path: path) }
    }

    private func perform(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult {
        try request.validate()
        let (title, document) = try Self.representations(of: write, for: request)
        let query = PostgresQuery(unsafeSQL: Self.saveSQL, binds: [
            request.operationScope.postgresBind, request.operationID.postgresBind,
            request.canonicalEncoding.postgresBind, request.draftID.postgresBind,
            request.expectedRevision.postgresBind, path.rawValue.postgresBind, title.postgresBind,
            document.map { PostgresBind(utf8Text: $0, type: .jsonb) } ?? PostgresBind(text: nil, type: .jsonb),
            lockTimeoutBind,
        ])
        let row: PostgresRow
        do {
            row = try await pool.pipelinedTransaction(query)[0]
        } catch let error as PostgresError {
            throw Self.failure(for: error, request: request)
        }
        let outcome = try row.decode(String.self, "outcome")
        let saved = { (revision: Int64) in
            SavedDraft(draftID: request.draftID, content: request.content, revision: revision)
        }
        switch outcome {
        case "committed": return .committed(saved(try row.decode(Int64.self, "revision")))
        case "replayed": return .replayed(saved(try row.decode(Int64.self, "revision")))
        case "operationConflict": throw SaveFailure.operationConflict
        default: throw PostgresError(code: .unexpectedResponse, message: "cutover.save_draft returned outcome \(outcome)")
        }
    }

    /// One save, as the statement the pool prepares once per connection; the parameters are
    /// scope, operation ID, canonical request, draft ID, expected revision, path, title, v2
    /// document and lock timeout.
    static let saveSQL = "SELECT outcome, revision FROM cutover.save_draft($1, $2, $3, $4, $5, $6, $7, $8, $9)"

    /// What each column receives: the title for v1 (and for v2, so that old readers see it),
    /// the v2 document as the UTF-8 bytes of its JSON text.
    ///
    /// A v2 write that the v2 codec has just encoded carries the content it came from, so its
    /// title is known without parsing the document again. Any other write is read with the
    /// codecs, which refuse what they cannot read.
    static func representations(of write: EncodedDraft, for request: SaveDraft) throws -> (title: String, document: [UInt8]?) {
        if write.format == .v2, let content = write.encodedContent {
            return (content.title, write.bytes)
        }
        let content = try DraftCodecRegistry.standard.decode(write, draftID: request.draftID)
        switch write.format {
        case .v1: return (content.title, nil)
        case .v2: return (content.title, write.bytes)
        default:
            throw DraftDecodingError.unsupportedFormat(write.format, draftID: request.draftID,
                                                       supported: [.v1, .v2])
        }
    }

    /// Maps the save function's raised outcomes and the connection's failures to the contract.
    static func failure(for error: PostgresError, request: SaveDraft) -> any Error {
        SaveFunctionFailure.failure(for: error, expected: request.expectedRevision) { error in
            switch error.sqlState {
            case .formatNotStored?: DraftStoreError.formatNotStored(error.message)
            case .unsupportedStoredFormat?:
                DraftDecodingError.unsupportedFormat(DraftFormat(rawValue: error.detail ?? "unknown"),
                                                     draftID: request.draftID, supported: [.v1, .v2])
            case .lockNotAvailable?: DraftStoreError.lockTimeout
            case .callerNotPermitted?: DraftStoreError.notPermitted(error.message)
            default: nil
            }
        }
    }
}

/// Why the PostgreSQL store refused a save that the contract's outcomes do not cover. Nothing
/// was committed in any case.
public enum DraftStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The writer's format is not stored at the table's phase (the modern format before
    /// expand, the legacy format after contract).
    case formatNotStored(String)
    /// Another transaction held a lock the save needed (a save of the same operation or the
    /// same draft still in flight) for longer than the store's lock timeout.
    case lockTimeout
    /// The role the store's session acts for may not write the drafts table itself; the save
    /// function, which runs as the control schema's owner, refuses to write for it.
    case notPermitted(String)

    public var description: String {
        switch self {
        case .formatNotStored(let reason), .notPermitted(let reason): "save refused: \(reason)"
        case .lockTimeout:
            "save timed out waiting for another save of the same operation or draft; nothing was committed; retry with the same operation ID"
        }
    }
}
