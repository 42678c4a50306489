/// A position in the write-ahead log, as PostgreSQL writes a `pg_lsn`: `16/B374D848`.
public struct WALPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The byte position.
    public var value: UInt64

    /// The position `value`.
    public init(_ value: UInt64) { self.value = value }

    /// The position a `pg_lsn`'s text names, or nil when it names none.
    public init?(text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16),
              high <= UInt64(UInt32.max), low <= UInt64(UInt32.max) else { return nil }
        value = high << 32 | low
    }

    /// Bytes from `earlier` to this position; 0 when `earlier` is not earlier.
    public func bytes(since earlier: WALPosition) -> Int64 {
        value > earlier.value ? Int64(clamping: value - earlier.value) : 0
    }

    public static func < (lhs: WALPosition, rhs: WALPosition) -> Bool { lhs.value < rhs.value }

    public var description: String { String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true) }
}
