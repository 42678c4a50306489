/// The primary key of one record: one part for a single-column key, several for a composite one.
///
/// Keys compare part by part (a shorter key that is a prefix of a longer one first),
/// hash and encode canonically, so the in-memory store and the ledger's fingerprint
/// agree on which record a request names.
///
/// ```swift
/// let order = RecordKey(.bigint(42))
/// let line = RecordKey(.bigint(7), .bigint(42))   // (tenant_id, id)
/// ```
public struct RecordKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The key's columns in the order the entity declares them.
    public var parts: [RecordKeyPart]

    /// A key of the given parts.
    public init(_ parts: RecordKeyPart...) {
        self.parts = parts
    }

    /// A key of the given parts.
    public init(parts: [RecordKeyPart]) {
        self.parts = parts
    }

    /// Orders part by part.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.parts.lexicographicallyPrecedes(rhs.parts)
    }

    /// Appends the key's canonical bytes: its part count, then each part.
    public func encode(into encoder: inout CanonicalEncoder) {
        encoder.append(UInt64(parts.count))
        for part in parts { part.encode(into: &encoder) }
    }

    /// The parts as a tuple would show them: `(7, 42)`, or the single part alone.
    public var description: String {
        parts.count == 1 ? parts[0].description : "(" + parts.map(\.description).joined(separator: ", ") + ")"
    }
}
