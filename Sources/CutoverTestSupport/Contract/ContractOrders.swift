import Cutover

/// `orders(id bigint primary key, status text)` migrating to `status_code smallint`, as an entity.
public enum ContractOrders: RecordContractEntity {
    /// The example plan's name.
    public static let planName = "orders-status-code"

    /// `id bigint`.
    public static let keyColumns = [RecordKeyColumn(name: "id", kind: .bigint)]

    /// The status as text.
    public static func encodeContent(_ status: OrderStatus, into encoder: inout CanonicalEncoder) {
        encoder.append(status.rawValue)
    }

    /// Every status is valid.
    public static func violation(of status: OrderStatus) -> SaveViolation? { nil }

    /// `status text`.
    public static let legacy = RecordFormatCodec<OrderStatus>(
        columns: ["status"],
        encode: { ["status": .text($0.rawValue)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let text) = row["status"] else { throw .missingColumn("status") }
            guard let status = OrderStatus(rawValue: text) else { throw .unexpectedValue(column: "status") }
            return status
        })

    /// `status_code smallint`.
    public static let modern = RecordFormatCodec<OrderStatus>(
        columns: ["status_code"],
        encode: { ["status_code": .integer($0.code)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .integer(let code) = row["status_code"] else { throw .missingColumn("status_code") }
            guard let status = OrderStatus(code: code) else { throw .unexpectedValue(column: "status_code") }
            return status
        })

    /// Order `index + 1`.
    public static func sampleKey(_ index: Int) -> RecordKey { RecordKey(.bigint(Int64(index) + 1)) }

    /// Pending, then paid.
    public static let sampleContents: [OrderStatus] = [.pending, .paid]
}
