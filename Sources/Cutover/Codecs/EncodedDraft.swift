/// A draft as a store keeps it: a format marker and the exact bytes of that format.
public struct EncodedDraft: Sendable, Hashable {
    /// Which format ``bytes`` are in; readers choose their decoder by it.
    public var format: DraftFormat

    /// The stored bytes, exactly as the format's encoder wrote them (or a legacy writer did).
    public var bytes: [UInt8]

    /// Wraps stored bytes with their format marker.
    public init(format: DraftFormat, bytes: [UInt8]) {
        self.format = format
        self.bytes = bytes
    }
}
