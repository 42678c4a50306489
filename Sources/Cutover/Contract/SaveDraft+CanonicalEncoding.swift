extension SaveDraft {
    /// The first field of every canonical encoding; a new layout gets a new tag.
    public static let canonicalEncodingTag = "cutover.save-draft.1"

    /// The request as canonical bytes, which a ledger fingerprints to recognise a retry.
    ///
    /// The writer path is not part of a request, so a retry that crosses the
    /// cutover encodes identically. Layout, every integer big-endian:
    ///
    /// | field | encoding |
    /// |---|---|
    /// | ``canonicalEncodingTag`` | text |
    /// | operation scope, operation ID, draft ID | text each |
    /// | expected revision | 8-byte two's complement |
    /// | title, body | text each |
    /// | tags | 8-byte count, then text each |
    ///
    /// where text is an 8-byte byte count followed by the UTF-8 bytes, exactly
    /// as the string holds them (no Unicode normalisation). The PostgreSQL
    /// store hashes these bytes with `sha256()`; the in-memory store compares
    /// them directly.
    public var canonicalEncoding: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + content.body.utf8.count)
        for text in [Self.canonicalEncodingTag, operationScope, operationID, draftID] {
            Self.appendText(text, to: &bytes)
        }
        Self.appendInteger(UInt64(bitPattern: expectedRevision), to: &bytes)
        Self.appendText(content.title, to: &bytes)
        Self.appendText(content.body, to: &bytes)
        Self.appendInteger(UInt64(content.tags.count), to: &bytes)
        for tag in content.tags {
            Self.appendText(tag, to: &bytes)
        }
        return bytes
    }

    private static func appendText(_ text: String, to bytes: inout [UInt8]) {
        appendInteger(UInt64(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func appendInteger(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
