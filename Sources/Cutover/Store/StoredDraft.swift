/// A draft as a store holds it: its identity, its revision and its stored representation.
///
/// Decode ``encoded`` with ``DraftCodecRegistry`` to see what a reader sees.
public struct StoredDraft: Sendable, Hashable {
    /// The draft's ID.
    public var draftID: String

    /// The draft's current revision, 1 or more.
    public var revision: Int64

    /// The stored format marker and bytes.
    public var encoded: EncodedDraft

    /// Creates a stored draft.
    public init(draftID: String, revision: Int64, encoded: EncodedDraft) {
        self.draftID = draftID
        self.revision = revision
        self.encoded = encoded
    }
}
