/// The reference store: many drafts and a scoped idempotency ledger, held in memory.
///
/// It is the model the PostgreSQL store is tested against. Every check and the
/// mutation run on the actor without a suspension point, which makes each
/// commit atomic. Operation identities and draft IDs compare by their exact
/// UTF-8 bytes, as PostgreSQL's text equality does, and the ledger compares
/// canonical request encodings where PostgreSQL compares their `sha256`: the
/// encodings hold nothing this store does not already hold.
///
/// ```swift
/// let store = InMemoryDraftStore()
/// let router = SaveRouter(
///     legacy: LegacyDraftAdapter(storage: store),
///     modern: ModernDraftAdapter(storage: store))
/// ```
///
/// It keeps no time and never prunes: retention is the durable store's concern.
public actor InMemoryDraftStore: DraftStorage, ReportingDraftWriting {
    private struct TextKey: Hashable {
        let bytes: [UInt8]

        init(_ parts: String...) {
            var bytes: [UInt8] = []
            for part in parts {
                bytes.append(contentsOf: String(part.utf8.count).utf8)
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: part.utf8)
            }
            self.bytes = bytes
        }
    }

    private struct Claim {
        let fingerprint: [UInt8]
        let entry: LedgerEntry
    }

    private var drafts: [TextKey: StoredDraft] = [:]
    private var ledger: [TextKey: Claim] = [:]

    /// How many saves have committed; replays and failures do not count.
    public private(set) var commitCount = 0

    /// An empty store: no drafts, no ledger entries, no commits.
    public init() {}

    /// Commits or replays one save, in the order ``DraftStorage`` prescribes.
    public func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) throws -> SaveResult {
        try request.validate()
        let operation = TextKey(request.operationScope, request.operationID)
        let fingerprint = request.canonicalEncoding
        if let claim = ledger[operation] {
            guard claim.fingerprint == fingerprint else { throw SaveFailure.operationConflict }
            return .replayed(SavedDraft(draftID: request.draftID, content: request.content, revision: claim.entry.revision))
        }
        let draftKey = TextKey(request.draftID)
        let current = drafts[draftKey]
        let revision = try request.committedRevision(over: current?.revision)
        let encoded = try EncodedDraft.stored(afterWriting: write, over: current?.encoded, draftID: request.draftID)

        drafts[draftKey] = StoredDraft(draftID: request.draftID, revision: revision, encoded: encoded)
        ledger[operation] = Claim(
            fingerprint: fingerprint,
            entry: LedgerEntry(draftID: request.draftID, revision: revision, path: path))
        commitCount += 1
        return .committed(SavedDraft(draftID: request.draftID, content: request.content, revision: revision))
    }

    /// The draft as stored now, or nil if it does not exist.
    public func draft(id draftID: String) -> StoredDraft? {
        drafts[TextKey(draftID)]
    }

    /// The ledger's record of an operation, or nil if it never committed.
    public func ledgerEntry(operationScope: String, operationID: String) -> LedgerEntry? {
        ledger[TextKey(operationScope, operationID)]?.entry
    }

    /// Places a draft as an earlier writer left it, without a commit or a ledger entry.
    ///
    /// For setting up states that saves cannot reach quickly, such as revision
    /// `Int64.max`, or a format this build does not know.
    public func seed(_ draft: StoredDraft) {
        precondition(draft.revision >= 1, "a stored draft has revision 1 or more")
        drafts[TextKey(draft.draftID)] = draft
    }
}
