/// The legacy writer path: saves in v1, the title only, through the shared store.
///
/// On a draft stored as v2 the store merges the title in and keeps body and
/// tags, so switching back to this writer loses nothing. ``SavedDraft/content``
/// repeats the request, body and tags included, though v1 did not store them.
///
/// ```swift
/// let legacy = LegacyDraftAdapter(storage: store)
/// ```
public typealias LegacyDraftAdapter = DraftAdapter<DraftCodecV1>

extension DraftAdapter where Encoder == DraftCodecV1 {
    /// The legacy adapter over `storage`, the store both paths share.
    public convenience init(storage: any DraftStorage) {
        self.init(storage: storage, encoder: DraftCodecV1(), path: .legacy)
    }
}
