/// The state and the commit rule of every in-memory store: records by key, a ledger of
/// (scope, operation ID) claims, and the count of commits.
///
/// ``InMemoryRecordStore`` (any entity) and ``InMemoryDraftStore`` (drafts, as their own
/// encoded form) are thin actors over it: each validates its request, then lets this
/// claim, replay or refuse the operation, check the revision and store what it writes,
/// all without a suspension point. Scopes and operation IDs compare by their exact UTF-8
/// bytes, as PostgreSQL's text equality does; the fingerprint is the request's canonical
/// encoding, where PostgreSQL keeps its sha256.
struct InMemoryLedger<Key: Hashable, Record, Entry> {
    private struct Operation: Hashable {
        let scope: [UInt8]
        let id: [UInt8]
    }

    private struct Claim {
        let fingerprint: [UInt8]
        let revision: Int64
        let entry: Entry
    }

    /// What one commit did.
    enum Outcome {
        /// The write applied and committed this revision.
        case committed(Int64)
        /// The operation had committed this revision before, with the same request.
        case replayed(Int64)
    }

    private var records: [Key: Record] = [:]
    private var claims: [Operation: Claim] = [:]

    /// How many saves have committed; replays and failures do not count.
    private(set) var commitCount = 0

    /// Claims (scope, operation ID), or replays or refuses it, then writes `key` over its
    /// current record at `expectedRevision`.
    ///
    /// - Parameters:
    ///   - revisionOf: a stored record's revision.
    ///   - store: the record to keep, from the current one (nil: none) and the revision
    ///     committed; it may refuse by throwing, and then nothing changes.
    ///   - entry: what the ledger records for the revision committed.
    mutating func commit(
        operationScope: String, operationID: String, fingerprint: [UInt8], key: Key, expectedRevision: Int64,
        revisionOf: (Record) -> Int64,
        store: (_ current: Record?, _ revision: Int64) throws -> Record,
        entry: (Int64) -> Entry
    ) throws -> Outcome {
        let operation = Operation(scope: Array(operationScope.utf8), id: Array(operationID.utf8))
        if let claim = claims[operation] {
            guard claim.fingerprint == fingerprint else { throw SaveFailure.operationConflict }
            return .replayed(claim.revision)
        }
        let current = records[key]
        let revision = try SaveDraft.committedRevision(expected: expectedRevision, over: current.map(revisionOf))
        records[key] = try store(current, revision)
        claims[operation] = Claim(fingerprint: fingerprint, revision: revision, entry: entry(revision))
        commitCount += 1
        return .committed(revision)
    }

    /// The record stored under `key`, or nil.
    func record(_ key: Key) -> Record? {
        records[key]
    }

    /// The ledger's entry for an operation, or nil if it never committed.
    func entry(operationScope: String, operationID: String) -> Entry? {
        claims[Operation(scope: Array(operationScope.utf8), id: Array(operationID.utf8))]?.entry
    }

    /// Places a record without a commit or a ledger entry.
    mutating func seed(_ record: Record, under key: Key) {
        records[key] = record
    }
}
