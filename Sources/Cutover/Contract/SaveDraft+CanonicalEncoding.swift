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
        let texts = Self.canonicalEncodingTag.utf8.count + operationScope.utf8.count + operationID.utf8.count
            + draftID.utf8.count + content.title.utf8.count + content.body.utf8.count
            + content.tags.reduce(0) { $0 + $1.utf8.count }
        // 8 bytes for each text's count (six, and one per tag), the revision and the tag count.
        let size = texts + 8 * (8 + content.tags.count)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = CanonicalWriter(buffer: buffer)
            writer.append(Self.canonicalEncodingTag)
            writer.append(operationScope)
            writer.append(operationID)
            writer.append(draftID)
            writer.append(UInt64(bitPattern: expectedRevision))
            writer.append(content.title)
            writer.append(content.body)
            writer.append(UInt64(content.tags.count))
            for tag in content.tags { writer.append(tag) }
            precondition(writer.position == size, "the canonical encoding's size was miscounted")
            initialized = size
        }
    }
}

/// Writes a canonical encoding's fields into a buffer of exactly their size.
private struct CanonicalWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var position = 0

    /// Text: its UTF-8 byte count, then the bytes.
    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(UInt64(utf8.count))
            guard let source = utf8.baseAddress else { return }
            UnsafeMutableRawPointer(buffer.baseAddress! + position).copyMemory(from: source, byteCount: utf8.count)
            position += utf8.count
        }
    }

    /// An integer, big-endian.
    mutating func append(_ value: UInt64) {
        UnsafeMutableRawPointer(buffer.baseAddress! + position).storeBytes(of: value.bigEndian, as: UInt64.self)
        position += 8
    }
}
