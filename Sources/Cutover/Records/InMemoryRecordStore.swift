/// The reference store for any entity: its records and a scoped idempotency ledger, held in memory.
///
/// The generic form of ``InMemoryDraftStore``; both keep their records and ledger in one
/// `InMemoryLedger`. Every check and the mutation run on the actor without a suspension
/// point, which makes each commit atomic, so a second save of an operation in flight is
/// served after the first finishes and replays it. Operation identities compare by their
/// exact UTF-8 bytes, keys as ``RecordKey`` does, and the ledger compares canonical request
/// encodings where PostgreSQL compares their `sha256`.
///
/// ```swift
/// let store = InMemoryRecordStore<Orders>()
/// let router = RecordRouter(legacy: RecordAdapter(storage: store, path: .legacy),
///                           modern: RecordAdapter(storage: store, path: .modern))
/// ```
public actor InMemoryRecordStore<Entity: RecordEntity>: RecordStorage {
    private var state = InMemoryLedger<RecordKey, StoredRecord, RecordLedgerEntry>()

    /// How many saves have committed; replays and failures do not count.
    public var commitCount: Int { state.commitCount }

    /// An empty store.
    public init() {}

    /// Commits or replays one save, in the order ``RecordStorage`` prescribes: the write's
    /// columns replace those of the same names, and the other format's columns stay.
    public func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) throws
        -> RecordSaveResult<Entity> {
        try request.validate()
        let outcome = try state.commit(
            operationScope: request.operationScope, operationID: request.operationID,
            fingerprint: request.canonicalEncoding, key: request.key,
            expectedRevision: request.expectedRevision, revisionOf: { $0.revision },
            store: { current, revision in
                StoredRecord(key: request.key, revision: revision,
                             columns: (current?.columns ?? [:]).merging(write) { _, written in written })
            },
            entry: { RecordLedgerEntry(key: request.key, revision: $0, path: path) })
        switch outcome {
        case .committed(let revision): return .committed(SavedRecord(key: request.key, content: request.content, revision: revision))
        case .replayed(let revision): return .replayed(SavedRecord(key: request.key, content: request.content, revision: revision))
        }
    }

    /// The record as stored now, or nil if it does not exist.
    public func record(_ key: RecordKey) -> StoredRecord? {
        state.record(key)
    }

    /// The ledger's record of an operation, or nil if it never committed.
    public func ledgerEntry(operationScope: String, operationID: String) -> RecordLedgerEntry? {
        state.entry(operationScope: operationScope, operationID: operationID)
    }

    /// Places a record as an earlier writer left it, without a commit or a ledger entry.
    public func seed(_ record: StoredRecord) {
        precondition(record.revision >= 1, "a stored record has revision 1 or more")
        state.seed(record, under: record.key)
    }
}
