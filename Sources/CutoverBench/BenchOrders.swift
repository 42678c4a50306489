import Cutover

/// The benchmark's second entity: `orders` of `examples/orders-status-code`, `id bigint`,
/// legacy `status text`, modern `status_code smallint`, declared as an application would.
///
/// The plan names no revision column, so the record store's revision is the row's `xmin`.
enum BenchOrders: RecordEntity {
    /// The statuses the example's sync trigger maps: 'new', 'paid', 'shipped' as 1, 2, 3.
    enum Status: String, Sendable, Hashable, CaseIterable {
        case new, paid, shipped

        /// The modern `status_code`.
        var code: Int64 { Int64(Self.allCases.firstIndex(of: self)! + 1) }

        /// The status of a code, or nil for a code no status has.
        init?(code: Int64) {
            guard code >= 1, code <= Int64(Self.allCases.count) else { return nil }
            self = Self.allCases[Int(code) - 1]
        }

        /// What a client's `sequence`th save writes: paid and shipped in turn, so that every
        /// save changes the row and its sync trigger derives the other column.
        static func written(bySave sequence: Int) -> Status { sequence.isMultiple(of: 2) ? .paid : .shipped }
    }

    /// The example plan's name.
    static let planName = "orders-status-code"

    /// `id bigint`.
    static let keyColumns = [RecordKeyColumn(name: "id", kind: .bigint)]

    /// The status as text.
    static func encodeContent(_ status: Status, into encoder: inout CanonicalEncoder) {
        encoder.append(status.rawValue)
    }

    /// Every status is valid.
    static func violation(of status: Status) -> SaveViolation? { nil }

    /// `status text`.
    static let legacy = RecordFormatCodec<Status>(
        columns: ["status"],
        encode: { ["status": .text($0.rawValue)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let text) = row["status"] else { throw .missingColumn("status") }
            guard let status = Status(rawValue: text) else { throw .unexpectedValue(column: "status") }
            return status
        })

    /// `status_code smallint`.
    static let modern = RecordFormatCodec<Status>(
        columns: ["status_code"],
        encode: { ["status_code": .integer($0.code)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .integer(let code) = row["status_code"] else { throw .missingColumn("status_code") }
            guard let status = Status(code: code) else { throw .unexpectedValue(column: "status_code") }
            return status
        })
}
