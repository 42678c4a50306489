/// A JSON value for a command's result on standard output.
///
/// Objects are written with their keys sorted (by UTF-8 bytes), so the same result always
/// gives the same text. Literals make results short to build:
///
/// ```swift
/// let result: JSONResult = ["phase": "expanded", "epoch": 4, "dryRun": false, "notes": [], "cursor": nil]
/// console.output.write(result.text(.pretty) + "\n")
/// ```
public enum JSONResult: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number, written exactly.
    case integer(Int64)
    /// A finite number; NaN and infinities are written as `null`, which JSON has instead.
    case number(Double)
    /// Text, escaped as JSON requires.
    case string(String)
    /// Elements in their order.
    case array([JSONResult])
    /// Members, written sorted by key.
    case object([String: JSONResult])
}

extension JSONResult: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONResult...) { self = .array(elements) }
    public init(dictionaryLiteral members: (String, JSONResult)...) {
        self = .object(Dictionary(members, uniquingKeysWith: { _, last in last }))
    }
}
