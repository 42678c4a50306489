/// The modern writer path: saves in v2, the whole content, through the shared store.
///
/// ```swift
/// let modern = ModernDraftAdapter(storage: store)
/// ```
public typealias ModernDraftAdapter = DraftAdapter<DraftCodecV2>

extension DraftAdapter where Encoder == DraftCodecV2 {
    /// The modern adapter over `storage`, the store both paths share.
    public convenience init(storage: any DraftStorage) {
        self.init(storage: storage, encoder: DraftCodecV2(), path: .modern)
    }
}
