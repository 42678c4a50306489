/// Why a text is not a duration in ``DurationText``'s grammar; its description ends a sentence
/// such as `invalid value 'soon' for '--lock-timeout': …`.
public enum DurationSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Empty, or not a number followed by a unit.
    case notADuration
    /// A number without a unit after it.
    case missingUnit(after: String)
    /// A unit the grammar does not have.
    case unknownUnit(String)
    /// Units not from largest to smallest, or one used twice.
    case unitsOutOfOrder
    /// More milliseconds than an `Int64` holds.
    case tooLong

    private static let unitList = "ms, s, m, h or d"

    /// What is wrong, in a few words.
    public var description: String {
        switch self {
        case .notADuration: "expected a duration such as 500ms, 2s, 5m or 7d"
        case .missingUnit(let digits): "missing a unit after '\(digits)' (use \(Self.unitList))"
        case .unknownUnit(let symbol): "unknown unit '\(symbol)' (use \(Self.unitList))"
        case .unitsOutOfOrder: "units must go from largest to smallest, each at most once"
        case .tooLong: "must be shorter"
        }
    }
}
