/// Builds the canonical bytes of a request, which a ledger fingerprints to recognise a retry.
///
/// Every integer is big-endian; text is an 8-byte UTF-8 byte count followed by the
/// bytes exactly as the string holds them (no Unicode normalisation).
public struct CanonicalEncoder: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An encoder holding no bytes.
    public init() {}

    /// An encoder holding no bytes, with room for `capacity` before it has to grow.
    public init(reservingCapacity capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends text: its UTF-8 byte count, then the bytes.
    public mutating func append(_ text: String) {
        append(UInt64(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends an unsigned integer as 8 bytes, big-endian.
    public mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a signed integer as 8 bytes of two's complement, big-endian.
    public mutating func append(_ value: Int64) {
        append(UInt64(bitPattern: value))
    }

    /// Appends one byte.
    public mutating func append(byte: UInt8) {
        bytes.append(byte)
    }
}
