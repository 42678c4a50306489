/// One column of a record's key: text, a bigint or a uuid.
///
/// Text compares and hashes by its exact UTF-8 bytes, as PostgreSQL's text equality
/// does, never by Unicode equivalence; parts order by kind first (bigint, uuid, text),
/// then by value: bigints numerically, uuids as unsigned 128-bit numbers, text by bytes.
public enum RecordKeyPart: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// A `bigint` column.
    case bigint(Int64)
    /// A `uuid` column, as its 128 bits (the first byte of the text form most significant).
    case uuid(UInt128)
    /// A `text` column.
    case text(String)

    private var rank: Int {
        switch self {
        case .bigint: 0
        case .uuid: 1
        case .text: 2
        }
    }

    /// Equal when of the same kind and value; text by exact UTF-8 bytes.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.bigint(let a), .bigint(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }

    /// Hashes the kind and the value; text by its UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rank)
        switch self {
        case .bigint(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        case .text(let value):
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        }
    }

    /// Orders by kind, then value; text by UTF-8 bytes (PostgreSQL's `C` collation order).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.bigint(let a), .bigint(let b)): a < b
        case (.uuid(let a), .uuid(let b)): a < b
        case (.text(let a), .text(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        default: lhs.rank < rhs.rank
        }
    }

    /// Appends the part's canonical bytes: a kind byte, then the value.
    ///
    /// bigint: 8 bytes big-endian two's complement; uuid: 16 bytes big-endian; text: as
    /// ``CanonicalEncoder/append(_:)-(String)`` writes it.
    public func encode(into encoder: inout CanonicalEncoder) {
        encoder.append(byte: UInt8(rank))
        switch self {
        case .bigint(let value): encoder.append(UInt64(bitPattern: value))
        case .uuid(let value):
            encoder.append(UInt64(truncatingIfNeeded: value >> 64))
            encoder.append(UInt64(truncatingIfNeeded: value))
        case .text(let value): encoder.append(value)
        }
    }

    /// The value as SQL would show it; uuids in their 8-4-4-4-12 hexadecimal form.
    public var description: String {
        switch self {
        case .bigint(let value): String(value)
        case .text(let value): value
        case .uuid(let value): Self.uuidText(value)
        }
    }

    private static func uuidText(_ value: UInt128) -> String {
        let hex = String(value, radix: 16)
        var rest = Substring(String(repeating: "0", count: 32 - hex.count) + hex)
        var groups: [Substring] = []
        for length in [8, 4, 4, 4, 12] {
            groups.append(rest.prefix(length))
            rest = rest.dropFirst(length)
        }
        return groups.joined(separator: "-")
    }
}
