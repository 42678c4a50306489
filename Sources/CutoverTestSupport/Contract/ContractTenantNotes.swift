import Cutover

/// `notes(tenant_id bigint, id bigint, primary key (tenant_id, id), body text)` migrating to `body_text text`:
/// an entity with a composite key.
public enum ContractTenantNotes: RecordContractEntity {
    /// A plan for the composite-key table.
    public static let planName = "tenant-notes"

    /// `(tenant_id bigint, id bigint)`.
    public static let keyColumns = [RecordKeyColumn(name: "tenant_id", kind: .bigint), RecordKeyColumn(name: "id", kind: .bigint)]

    /// The note as text.
    public static func encodeContent(_ note: String, into encoder: inout CanonicalEncoder) {
        encoder.append(note)
    }

    /// A note must not be empty.
    public static func violation(of note: String) -> SaveViolation? {
        note.isEmpty ? .empty(.body) : nil
    }

    /// `body text`.
    public static let legacy = textCodec("body")

    /// `body_text text`.
    public static let modern = textCodec("body_text")

    private static func textCodec(_ column: String) -> RecordFormatCodec<String> {
        RecordFormatCodec(
            columns: [column],
            encode: { [column: .text($0)] },
            decode: { (row) throws(RecordDecodingError) in
                guard case .text(let text) = row[column] else { throw .missingColumn(column) }
                return text
            })
    }

    /// Keys that share their `id` across two tenants, so a store that ignores the tenant mixes them.
    public static func sampleKey(_ index: Int) -> RecordKey {
        RecordKey(.bigint(Int64(index % 2) + 1), .bigint(Int64(index / 2) + 1))
    }

    /// Two notes.
    public static let sampleContents = ["first note", "second note"]
}
