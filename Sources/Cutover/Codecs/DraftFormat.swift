/// The marker that says which format a stored draft is in.
///
/// Markers are open: a stored draft can carry one this build does not know
/// (a future `v3`), and readers answer it with
/// ``DraftDecodingError/unsupportedFormat(_:draftID:supported:)``.
public struct DraftFormat: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The legacy format: the title as UTF-8 text, nothing else.
    public static let v1 = DraftFormat(rawValue: "v1")

    /// The modern format: a canonical JSON document with title, body, tags and version.
    public static let v2 = DraftFormat(rawValue: "v2")

    /// The marker as stored, for example `"v2"`.
    public let rawValue: String

    /// Wraps a stored marker, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The marker as stored.
    public var description: String { rawValue }

    /// Orders markers by their raw text, so lists of formats print in a stable order.
    public static func < (lhs: DraftFormat, rhs: DraftFormat) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}
