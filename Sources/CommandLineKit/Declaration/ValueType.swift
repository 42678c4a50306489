/// How the text of an option or argument becomes a typed value, and how a value is shown.
///
/// ```swift
/// let batchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
///                        help: "Rows converted in one transaction.")
/// let path = Argument("path", type: .choice(SavePath.self), help: "The writer to switch to.")
/// let step = Argument("step", type: .choice(["switch": PlanStep.Kind.switch, "expand": .expand]),
///                     help: "What to undo.")
/// ```
public struct ValueType<Value: Sendable>: Sendable {
    /// The limits in words for help, for example `between 1 and 100000`.
    let constraint: String?
    /// The only values accepted, when there is such a list (shown in help and used for suggestions).
    let allowedValues: [String]
    let parseText: @Sendable (String) -> Result<Value, InvalidValue>
    let formatValue: @Sendable (Value) -> String

    /// A value type of your own.
    ///
    /// - Parameters:
    ///   - constraint: the limits in words for help (`between 1 and 10`), if any.
    ///   - allowedValues: the complete list of accepted spellings, if there is one.
    ///   - parse: turns text into a value or says why it cannot.
    ///   - format: writes a value as the text that `parse` would accept (used for defaults).
    public init(constraint: String? = nil, allowedValues: [String] = [],
                parse: @escaping @Sendable (String) -> Result<Value, InvalidValue>,
                format: @escaping @Sendable (Value) -> String) {
        self.constraint = constraint
        self.allowedValues = allowedValues
        self.parseText = parse
        self.formatValue = format
    }

    /// The value that `text` stands for, or why it stands for none.
    public func parse(_ text: String) -> Result<Value, InvalidValue> {
        parseText(text)
    }

    /// The text that stands for `value`.
    public func format(_ value: Value) -> String {
        formatValue(value)
    }
}

extension ValueType where Value == String {
    /// Any text, taken as it is.
    public static var string: ValueType<String> {
        ValueType(parse: { .success($0) }, format: { $0 })
    }
}

extension ValueType where Value: Equatable {
    /// One of a fixed list of words, each standing for its value; help lists the words in order.
    public static func choice(_ words: KeyValuePairs<String, Value>) -> ValueType<Value> {
        let spellings = words.map(\.key)
        let pairs = Array(words)
        return ValueType(allowedValues: spellings, parse: { text in
            pairs.first { $0.key == text }.map { .success($0.value) } ?? .failure(notAChoice(text, spellings))
        }, format: { value in pairs.first { $0.value == value }?.key ?? "" })
    }
}

extension ValueType {
    /// Values of `element` separated by commas, `1,8,32`; at least one. Help lists the
    /// element's choices, if it has any.
    public static func commaSeparated<Element: Sendable>(_ element: ValueType<Element>) -> ValueType<[Element]>
    where Value == [Element] {
        ValueType(constraint: element.constraint.map { "each " + $0 }, allowedValues: element.allowedValues, parse: { text in
            var values: [Element] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                switch element.parse(String(part)) {
                case .success(let value): values.append(value)
                case .failure(let invalid):
                    return .failure(InvalidValue(reason: "'\(part)' \(invalid.reason)", suggestion: nil))
                }
            }
            return .success(values)
        }, format: { values in values.map(element.format).joined(separator: ",") })
    }
}

extension ValueType where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of the cases of a string-backed enumeration, spelled as its raw value.
    public static func choice(_ type: Value.Type) -> ValueType<Value> {
        let words = Value.allCases.map(\.rawValue)
        return ValueType(allowedValues: words, parse: { text in
            Value(rawValue: text).map { .success($0) } ?? .failure(notAChoice(text, words))
        }, format: { $0.rawValue })
    }
}

extension ValueType where Value == Int {
    /// A whole number within `range`.
    public static func integer(in range: ClosedRange<Int>) -> ValueType<Int> {
        integer(ValueBounds(lower: range.lowerBound, upper: range.upperBound))
    }

    /// A whole number no smaller than `minimum`.
    public static func integer(atLeast minimum: Int) -> ValueType<Int> {
        integer(ValueBounds(lower: minimum, upper: nil))
    }

    /// Any whole number.
    public static var integer: ValueType<Int> {
        integer(.unbounded)
    }

    private static func integer(_ bounds: ValueBounds<Int>) -> ValueType<Int> {
        bounded(bounds, parse: { text in
            Int(text).map { .success($0) } ?? .failure(InvalidValue(reason: "must be a whole number"))
        }, format: { String($0) })
    }
}

extension ValueType where Value == Double {
    /// A number written in digits with an optional fraction (`0`, `0.25`, `1.5`), within `range`.
    public static func decimal(in range: ClosedRange<Double>) -> ValueType<Double> {
        bounded(ValueBounds(lower: range.lowerBound, upper: range.upperBound), parse: { text in
            // Digits and at most one point between digits: no sign, exponent, "inf" or "nan",
            // which Double's own parser would take.
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let isDecimal = (1...2).contains(parts.count)
                && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
            guard isDecimal, let number = Double(text), number.isFinite else {
                return .failure(InvalidValue(reason: "must be a number such as 0.25"))
            }
            return .success(number)
        }, format: { number in
            let text = String(number)
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        })
    }
}

extension ValueType where Value: Comparable {
    /// Values read by `parse` and accepted only from `lower` to `upper` (where given), which
    /// help states as `between 1 and 10` and errors as `must be between 1 and 10`, with
    /// values written by `format`.
    public static func bounded(lower: Value?, upper: Value?,
                               parse: @escaping @Sendable (String) -> Result<Value, InvalidValue>,
                               format: @escaping @Sendable (Value) -> String) -> ValueType<Value> {
        bounded(ValueBounds(lower: lower, upper: upper), parse: parse, format: format)
    }

    static func bounded(_ bounds: ValueBounds<Value>,
                                    parse: @escaping @Sendable (String) -> Result<Value, InvalidValue>,
                                    format: @escaping @Sendable (Value) -> String) -> ValueType<Value> {
        ValueType(constraint: bounds.phrase(format), parse: { text in
            parse(text).flatMap { bounds.check($0, format) }
        }, format: format)
    }
}

private func notAChoice(_ text: String, _ words: [String]) -> InvalidValue {
    InvalidValue(reason: "must be one of " + words.joined(separator: ", "),
                 suggestion: Suggestion.closest(to: text, among: words))
}
