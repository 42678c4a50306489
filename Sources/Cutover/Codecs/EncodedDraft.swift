/// A draft as a store keeps it: a format marker and the exact bytes of that format.
public struct EncodedDraft: Sendable, Hashable {
    /// Which format ``bytes`` are in; readers choose their decoder by it.
    public var format: DraftFormat {
        didSet { encodedContent = nil }
    }

    /// The stored bytes, exactly as the format's encoder wrote them (or a legacy writer did).
    public var bytes: [UInt8] {
        didSet { encodedContent = nil }
    }

    /// The content this package's own codec encoded ``bytes`` from, while they are unchanged;
    /// nil for bytes from anywhere else. A store that needs the content back (the v1 title of
    /// a v2 write) takes it from here instead of encoding or parsing again. Not part of the
    /// value: two drafts with the same format and bytes are equal.
    package private(set) var encodedContent: DraftContent?

    /// Wraps stored bytes with their format marker.
    public init(format: DraftFormat, bytes: [UInt8]) {
        self.format = format
        self.bytes = bytes
    }

    /// Bytes a codec of this package has just written from `content`.
    init(format: DraftFormat, bytes: [UInt8], encodedFrom content: DraftContent) {
        self.init(format: format, bytes: bytes)
        encodedContent = content
    }

    public static func == (left: EncodedDraft, right: EncodedDraft) -> Bool {
        left.format == right.format && left.bytes == right.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(format)
        hasher.combine(bytes)
    }
}
