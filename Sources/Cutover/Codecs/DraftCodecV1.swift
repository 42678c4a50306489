/// The legacy format, v1: the title as UTF-8 text and nothing else.
///
/// These are the bytes the legacy application keeps in `drafts.title`: no
/// framing, no terminator, no normalisation. A v1 draft reads back with
/// ``DraftContent/defaultBody`` and ``DraftContent/defaultTags``.
///
/// ```swift
/// DraftCodecV1().encode(DraftContent(title: "Plan", body: "dropped")).bytes  // Array("Plan".utf8)
/// ```
public struct DraftCodecV1: DraftEncoder, DraftDecoder {
    /// Creates the codec; it has no settings.
    public init() {}

    /// ``DraftFormat/v1``.
    public var format: DraftFormat { .v1 }

    /// The title's UTF-8 bytes; body and tags are not part of v1.
    public func encode(_ content: DraftContent) -> EncodedDraft {
        EncodedDraft(format: .v1, bytes: Array(content.title.utf8))
    }

    /// The title the bytes hold, with the default body and tags.
    ///
    /// Fails only on bytes that are not UTF-8. Limits on new saves are not
    /// applied: a legacy writer may have stored any text, and it must stay readable.
    public func decode(_ bytes: [UInt8]) throws(MalformedDraftProblem) -> DraftContent {
        DraftContent(title: try UTF8Validation.string(from: bytes))
    }
}
