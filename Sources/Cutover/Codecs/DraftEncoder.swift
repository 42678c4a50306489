/// Turns content into one format's stored bytes.
public protocol DraftEncoder: Sendable {
    /// The format this encoder writes.
    var format: DraftFormat { get }

    /// The stored form of `content` in ``format``; fields the format lacks are dropped.
    func encode(_ content: DraftContent) -> EncodedDraft
}
