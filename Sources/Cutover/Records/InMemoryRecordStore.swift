/// The reference store for any entity: its records and a scoped idempotency ledger, held in memory.
///
/// The generic form of ``InMemoryDraftStore``. Every check and the mutation run on the
/// actor without a suspension point, which makes each commit atomic, so a second save
/// of an operation in flight is served after the first finishes and replays it. Operation
/// identities compare by their exact UTF-8 bytes, keys as ``RecordKey`` does, and the
/// ledger compares canonical request encodings where PostgreSQL compares their `sha256`.
///
/// ```swift
/// let store = InMemoryRecordStore<Orders>()
/// let router = RecordRouter(legacy: RecordAdapter(storage: store, path: .legacy),
///                           modern: RecordAdapter(storage: store, path: .modern))
/// ```
public actor InMemoryRecordStore<Entity: RecordEntity>: RecordStorage {
    private struct Operation: Hashable {
        let scope: RecordKeyPart
        let id: RecordKeyPart
    }

    private struct Claim {
        let fingerprint: [UInt8]
        let entry: RecordLedgerEntry
    }

    private var records: [RecordKey: StoredRecord] = [:]
    private var ledger: [Operation: Claim] = [:]

    /// How many saves have committed; replays and failures do not count.
    public private(set) var commitCount = 0

    /// An empty store.
    public init() {}

    /// Commits or replays one save, in the order ``RecordStorage`` prescribes.
    public func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) throws
        -> RecordSaveResult<Entity> {
        try request.validate()
        let operation = Operation(scope: .text(request.operationScope), id: .text(request.operationID))
        let fingerprint = request.canonicalEncoding
        if let claim = ledger[operation] {
            guard claim.fingerprint == fingerprint else { throw SaveFailure.operationConflict }
            return .replayed(SavedRecord(key: request.key, content: request.content, revision: claim.entry.revision))
        }
        let current = records[request.key]
        let revision = try request.committedRevision(over: current?.revision)
        records[request.key] = StoredRecord(
            key: request.key, revision: revision,
            columns: (current?.columns ?? [:]).merging(write) { _, written in written })
        ledger[operation] = Claim(fingerprint: fingerprint, entry: RecordLedgerEntry(key: request.key, revision: revision, path: path))
        commitCount += 1
        return .committed(SavedRecord(key: request.key, content: request.content, revision: revision))
    }

    /// The record as stored now, or nil if it does not exist.
    public func record(_ key: RecordKey) -> StoredRecord? {
        records[key]
    }

    /// The ledger's record of an operation, or nil if it never committed.
    public func ledgerEntry(operationScope: String, operationID: String) -> RecordLedgerEntry? {
        ledger[Operation(scope: .text(operationScope), id: .text(operationID))]?.entry
    }

    /// Places a record as an earlier writer left it, without a commit or a ledger entry.
    public func seed(_ record: StoredRecord) {
        precondition(record.revision >= 1, "a stored record has revision 1 or more")
        records[record.key] = record
    }
}
