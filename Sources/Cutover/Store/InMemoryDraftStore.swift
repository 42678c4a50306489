/// The reference store: many drafts and a scoped idempotency ledger, held in memory.
///
/// It is the model the PostgreSQL store is tested against, and the drafts form of
/// ``InMemoryRecordStore``: both keep their records and ledger in one `InMemoryLedger`,
/// whose every check and mutation run on the actor without a suspension point, which
/// makes each commit atomic. Operation identities and draft IDs compare by their exact
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
    /// Drafts by the exact UTF-8 bytes of their IDs, each as its encoded form.
    private var state = InMemoryLedger<[UInt8], StoredDraft, LedgerEntry>()

    /// How many saves have committed; replays and failures do not count.
    public var commitCount: Int { state.commitCount }

    /// An empty store: no drafts, no ledger entries, no commits.
    public init() {}

    /// Commits or replays one save, in the order ``DraftStorage`` prescribes.
    public func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) throws -> SaveResult {
        try request.validate()
        let outcome = try state.commit(
            operationScope: request.operationScope, operationID: request.operationID,
            fingerprint: request.canonicalEncoding, key: Array(request.draftID.utf8),
            expectedRevision: request.expectedRevision, revisionOf: \.revision,
            store: { current, revision in
                StoredDraft(draftID: request.draftID, revision: revision,
                            encoded: try EncodedDraft.stored(afterWriting: write, over: current?.encoded, draftID: request.draftID))
            },
            entry: { LedgerEntry(draftID: request.draftID, revision: $0, path: path) })
        switch outcome {
        case .committed(let revision): return .committed(SavedDraft(draftID: request.draftID, content: request.content, revision: revision))
        case .replayed(let revision): return .replayed(SavedDraft(draftID: request.draftID, content: request.content, revision: revision))
        }
    }

    /// The draft as stored now, or nil if it does not exist.
    public func draft(id draftID: String) -> StoredDraft? {
        state.record(Array(draftID.utf8))
    }

    /// The ledger's record of an operation, or nil if it never committed.
    public func ledgerEntry(operationScope: String, operationID: String) -> LedgerEntry? {
        state.entry(operationScope: operationScope, operationID: operationID)
    }

    /// Places a draft as an earlier writer left it, without a commit or a ledger entry.
    ///
    /// For setting up states that saves cannot reach quickly, such as revision
    /// `Int64.max`, or a format this build does not know.
    public func seed(_ draft: StoredDraft) {
        precondition(draft.revision >= 1, "a stored draft has revision 1 or more")
        state.seed(draft, under: Array(draft.draftID.utf8))
    }
}
