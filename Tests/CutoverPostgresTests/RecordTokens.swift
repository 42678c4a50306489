import Cutover

/// `tokens(id uuid)`, its `label` legacy and `shout` (the label in capitals) modern: an entity
/// with a uuid key and no revision column.
enum RecordTokens: RecordEntity {
    static let planName = "tokens"
    static let keyColumns = [RecordKeyColumn(name: "id", kind: .uuid)]

    static func encodeContent(_ label: String, into encoder: inout CanonicalEncoder) {
        encoder.append(label)
    }

    static func violation(of label: String) -> SaveViolation? {
        label.isEmpty ? .empty(.body) : nil
    }

    static let legacy = RecordFormatCodec<String>(
        columns: ["label"],
        encode: { ["label": .text($0)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let label) = row["label"] else { throw .missingColumn("label") }
            return label
        })

    static let modern = RecordFormatCodec<String>(
        columns: ["label", "shout"],
        encode: { ["label": .text($0), "shout": .text($0.uppercased())] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let label) = row["label"] else { throw .missingColumn("label") }
            return label
        })
}
