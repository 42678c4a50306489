/// The limit a save request broke, naming the field and never its value.
public enum SaveViolation: Sendable, Hashable, CustomStringConvertible {
    /// A field that must have at least one character is empty.
    case empty(RequestField)

    /// A field has more characters (Unicode scalars) than its limit allows.
    case tooLong(RequestField, maximum: Int)

    /// A field contains U+0000, which PostgreSQL text cannot hold.
    case containsNUL(RequestField)

    /// The expected revision is below 0.
    case negativeExpectedRevision

    /// The key does not have the entity's key columns: `expected` parts of their kinds.
    case keyShape(expected: Int)

    /// The content has more tags than ``SaveLimits/maximumTagCount``.
    case tooManyTags(maximum: Int)

    /// One line naming the field and the limit.
    public var description: String {
        switch self {
        case .empty(let field): "\(field) is empty"
        case .tooLong(let field, let maximum): "\(field) is longer than \(maximum) characters"
        case .containsNUL(let field): "\(field) contains a NUL character"
        case .negativeExpectedRevision: "expected revision is negative"
        case .keyShape(let expected): "key does not match the entity's \(expected) key columns"
        case .tooManyTags(let maximum): "content has more than \(maximum) tags"
        }
    }
}
