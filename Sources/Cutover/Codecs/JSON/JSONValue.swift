/// A parsed JSON value that keeps numbers as their literal text and members in document order.
///
/// Kept internal: it exists so the v2 codec controls every byte it writes and
/// can carry fields it does not know through a legacy write untouched.
indirect enum JSONValue: Sendable, Equatable {
    case null
    case boolean(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    var kind: JSONKind {
        switch self {
        case .null: .null
        case .boolean: .boolean
        case .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}

/// One `"name": value` pair of a JSON object.
struct JSONMember: Sendable, Equatable {
    var name: String
    var value: JSONValue
}
