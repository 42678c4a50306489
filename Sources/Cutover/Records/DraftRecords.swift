/// Drafts declared as an entity: `drafts(id text)`, legacy `title text`, modern `document` (v2 JSON).
///
/// The same limits and content as ``SaveDraft``; the legacy format writes the title
/// only, the modern format the whole content as ``DraftCodecV2`` encodes it.
public enum DraftRecords: RecordEntity {
    /// The built-in plan's name.
    public static let planName = "drafts"

    /// `id text`.
    public static let keyColumns = [RecordKeyColumn(name: "id", kind: .text)]

    /// Title, body, tag count, then each tag, as text.
    public static func encodeContent(_ content: DraftContent, into encoder: inout CanonicalEncoder) {
        encoder.append(content.title)
        encoder.append(content.body)
        encoder.append(UInt64(content.tags.count))
        for tag in content.tags { encoder.append(tag) }
    }

    /// The limits of ``SaveLimits`` on title, body and tags.
    public static func violation(of content: DraftContent) -> SaveViolation? {
        SaveDraft.violation(of: content)
    }

    /// v1: the `title` column; a reader sees the default body and tags.
    public static let legacy = RecordFormatCodec<DraftContent>(
        columns: ["title"],
        encode: { ["title": .text($0.title)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let title) = row["title"] else { throw .missingColumn("title") }
            return DraftContent(title: title)
        })

    /// v2: the `document` column holding the v2 JSON document.
    public static let modern = RecordFormatCodec<DraftContent>(
        columns: ["document"],
        encode: { ["document": .text(String(decoding: DraftCodecV2().encode($0).bytes, as: UTF8.self))] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let document) = row["document"] else { throw .missingColumn("document") }
            do {
                return try DraftCodecV2().decode(Array(document.utf8))
            } catch {
                throw .unexpectedValue(column: "document")
            }
        })
}
