/// What is wrong with a stored draft's bytes, by position and field name, never by content.
public enum MalformedDraftProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not UTF-8; the offset is where the first bad sequence starts.
    case invalidUTF8(byteOffset: Int)

    /// The data ends where more was required: cut short in storage or transit.
    case truncated

    /// A byte that the format's grammar does not allow at this position.
    case invalidSyntax(byteOffset: Int)

    /// A complete value is followed by more bytes.
    case trailingData(byteOffset: Int)

    /// Arrays and objects are nested deeper than the reader accepts.
    case nestingTooDeep(maximum: Int)

    /// An object names the same field twice, so its meaning is ambiguous.
    case duplicateField(byteOffset: Int)

    /// A field the format requires is absent.
    case missingField(String)

    /// A field holds the wrong kind of value, for example a number where text belongs.
    case wrongType(field: String, expected: JSONKind, found: JSONKind)

    /// The document's own version field disagrees with its format marker.
    case unexpectedVersion(found: String)

    /// One line saying what is wrong and where.
    public var description: String {
        switch self {
        case .invalidUTF8(let offset): "invalid UTF-8 at byte \(offset)"
        case .truncated: "data ends early (truncated)"
        case .invalidSyntax(let offset): "unexpected byte at offset \(offset)"
        case .trailingData(let offset): "unexpected data after the document at byte \(offset)"
        case .nestingTooDeep(let maximum): "values nested deeper than \(maximum) levels"
        case .duplicateField(let offset): "a field is repeated at byte \(offset)"
        case .missingField(let name): "required field \(String(reflecting: name)) is missing"
        case .wrongType(let field, let expected, let found):
            "field \(String(reflecting: field)) should be \(expected.withArticle) but is \(found.withArticle)"
        case .unexpectedVersion(let found): "version field is \(found), not the version its format marker names"
        }
    }
}
