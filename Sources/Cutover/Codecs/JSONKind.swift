/// The kind of a JSON value, as decoding errors name it.
public enum JSONKind: String, Sendable, Hashable, CustomStringConvertible {
    /// `{…}`
    case object
    /// `[…]`
    case array
    /// `"…"`
    case string
    /// `2`, `-1.5e3`
    case number
    /// `true` or `false`
    case boolean
    /// `null`
    case null

    /// The kind's name.
    public var description: String { rawValue }

    var withArticle: String {
        switch self {
        case .object, .array: "an \(rawValue)"
        case .string, .number, .boolean: "a \(rawValue)"
        case .null: "null"
        }
    }
}
