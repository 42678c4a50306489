/// How one writer path's format turns an entity's content into its columns and back.
///
/// The legacy format writes the legacy columns and the modern format the modern ones;
/// a store merges what a write returns into the row, so the other format's columns
/// stay as they were.
public struct RecordFormatCodec<Content: Sendable>: Sendable {
    /// The columns this format writes, by name.
    public let columns: [String]

    private let encodeContent: @Sendable (Content) -> [String: RecordColumnValue]
    private let decodeRow: @Sendable ([String: RecordColumnValue]) throws(RecordDecodingError) -> Content

    /// A codec writing `columns` with `encode` and reading a row with `decode`.
    public init(
        columns: [String],
        encode: @escaping @Sendable (Content) -> [String: RecordColumnValue],
        decode: @escaping @Sendable ([String: RecordColumnValue]) throws(RecordDecodingError) -> Content
    ) {
        self.columns = columns
        encodeContent = encode
        decodeRow = decode
    }

    /// The content as this format's column values.
    public func encode(_ content: Content) -> [String: RecordColumnValue] {
        encodeContent(content)
    }

    /// The content a reader of this format sees in `row`.
    public func decode(_ row: [String: RecordColumnValue]) throws(RecordDecodingError) -> Content {
        try decodeRow(row)
    }
}
