/// What a check's query must return for the check to pass, such as `= 0`, `<= 100` or `is null`.
///
/// A check's query returns one value, as PostgreSQL prints it, or NULL.
/// ``evaluate(observed:)`` compares it with the expectation:
///
/// - numbers compare by value, exactly, whatever their spelling (`12`, `12.0`,
///   `1.2e1`), when the observed text is a number too;
/// - `true` and `false` match PostgreSQL's `t`/`f` and `true`/`false`;
/// - `'text'` matches the observed text exactly, byte for byte;
/// - otherwise `=` and `!=` compare the observed text with the literal as
///   written, so `= 0` fails and `!= 0` holds for `abc`, and ordering fails;
/// - NULL fails every comparison, `!=` included, as in SQL; only `is null`
///   accepts it, and `is not null` accepts everything else.
///
/// ```swift
/// let expectation = CheckExpectation("<= 100")!
/// expectation.evaluate(observed: "12")          // true
/// expectation.describe(observed: "120")         // "expected <= 100, observed 120"
/// ```
public enum CheckExpectation: Sendable, Hashable, CustomStringConvertible {
    /// The observed value compared with a literal.
    case compare(Comparison, Operand)
    /// The observed value is NULL.
    case isNull
    /// The observed value is anything but NULL.
    case isNotNull

    /// How the observed value relates to the literal. Raw values are the spellings written in a manifest.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        /// `=`
        case equal = "="
        /// `!=`, also written `<>`
        case notEqual = "!="
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="

        /// Whether the comparison orders values rather than testing equality; ordering needs numbers.
        public var isOrdering: Bool {
            self != .equal && self != .notEqual
        }
    }

    /// The literal an observed value is compared with.
    public enum Operand: Sendable, Hashable, CustomStringConvertible {
        /// A decimal number, kept as written: `0`, `-1.5`, `1e6`.
        case number(String)
        /// `true` or `false`.
        case boolean(Bool)
        /// A quoted text literal, unquoted: `'it''s'` holds `it's`.
        case text(String)

        /// The literal as a manifest writes it.
        public var description: String {
            switch self {
            case .number(let literal): literal
            case .boolean(let flag): flag ? "true" : "false"
            case .text(let text): "'" + text.replacing("'", with: "''") + "'"
            }
        }

        /// The text an observed value must equal when it cannot be read as the operand's kind.
        fileprivate var exactText: String {
            switch self {
            case .number(let literal): literal
            case .boolean(let flag): flag ? "true" : "false"
            case .text(let text): text
            }
        }
    }

    /// Reads an expectation such as `= 0`, `<= 100`, `!= 'done'` or `is null`; nil when `text` is not one.
    ///
    /// An expectation is an operator (`=`, `!=` or `<>`, `<`, `<=`, `>`, `>=`) and
    /// a literal, or `is null`, or `is not null`. A literal is a decimal number,
    /// `true`, `false` or SQL-quoted text with `''` for a quote; ordering operators
    /// need a number. Keywords are case-insensitive and spaces around the parts
    /// optional. Control characters are never part of an expectation.
    public init?(_ text: String) {
        guard !text.unicodeScalars.contains(where: DisplayText.isControl) else { return nil }
        let trimmed = Self.trimmingSpaces(text[...])
        let words = trimmed.split(separator: " ").map { $0.lowercased() }
        if words == ["is", "null"] { self = .isNull; return }
        if words == ["is", "not", "null"] { self = .isNotNull; return }

        // Two-character operators first, so `<=` is not read as `<` followed by `=`.
        let spellings: [(String, Comparison)] = [
            ("<=", .lessOrEqual), (">=", .greaterOrEqual), ("!=", .notEqual), ("<>", .notEqual),
            ("=", .equal), ("<", .less), (">", .greater),
        ]
        guard let (spelling, comparison) = spellings.first(where: { trimmed.hasPrefix($0.0) }),
              let operand = Self.operand(Self.trimmingSpaces(trimmed.dropFirst(spelling.count)))
        else { return nil }
        if comparison.isOrdering {
            guard case .number = operand else { return nil }
        }
        self = .compare(comparison, operand)
    }

    /// The expectation as a manifest writes it, for example `<= 100` or `is null`.
    public var description: String {
        switch self {
        case .compare(let comparison, let operand): "\(comparison.rawValue) \(operand)"
        case .isNull: "is null"
        case .isNotNull: "is not null"
        }
    }

    /// Whether `observed`, a value as PostgreSQL prints it or nil for NULL, meets the expectation.
    public func evaluate(observed: String?) -> Bool {
        switch self {
        case .isNull: return observed == nil
        case .isNotNull: return observed != nil
        case .compare(let comparison, let operand):
            guard let observed else { return false }
            switch operand {
            case .number(let literal):
                if let expected = ExactDecimal(literal), let actual = ExactDecimal(observed) {
                    return comparison.holds(actual, expected)
                }
            case .boolean(let expected):
                if let actual = Self.postgresBoolean(observed) {
                    return comparison.holds(isEqual: actual == expected)
                }
            case .text:
                break
            }
            // Byte for byte, as PostgreSQL compares text: Swift's == would equate composed and decomposed accents.
            return comparison.holds(isEqual: observed.utf8.elementsEqual(operand.exactText.utf8))
        }
    }

    /// One line for a refusal: `expected = 0, observed 12`; NULL reads as `NULL`, text as a cut-short SQL literal.
    public func describe(observed: String?) -> String {
        let shown = switch observed {
        case nil: "NULL"
        case let number? where ExactDecimal(number) != nil: DisplayText.unquoted(number)
        case let text?: DisplayText.sqlQuoted(text)
        }
        return "expected \(self), observed \(shown)"
    }

    private static func operand(_ text: Substring) -> Operand? {
        switch text.lowercased() {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        default: break
        }
        if text.first == "'" { return quotedText(text.dropFirst()).map(Operand.text) }
        return ExactDecimal(String(text)) == nil ? nil : .number(String(text))
    }

    /// The text of an SQL literal whose opening quote is already consumed, or nil unless it closes at the very end.
    private static func quotedText(_ rest: Substring) -> String? {
        var text = ""
        var remaining = rest
        while let quote = remaining.firstIndex(of: "'") {
            text += remaining[..<quote]
            remaining = remaining[remaining.index(after: quote)...]
            guard remaining.first == "'" else { return remaining.isEmpty ? text : nil }
            text += "'"
            remaining = remaining.dropFirst()
        }
        return nil
    }

    private static func postgresBoolean(_ text: String) -> Bool? {
        switch text {
        case "t", "true": true
        case "f", "false": false
        default: nil
        }
    }

    private static func trimmingSpaces(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { $0 != " " }), let last = text.lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return text[first...last]
    }
}

extension CheckExpectation.Comparison {
    /// Whether `observed` stands in this relation to `expected`.
    fileprivate func holds<Value: Comparable>(_ observed: Value, _ expected: Value) -> Bool {
        switch self {
        case .equal: observed == expected
        case .notEqual: observed != expected
        case .less: observed < expected
        case .lessOrEqual: observed <= expected
        case .greater: observed > expected
        case .greaterOrEqual: observed >= expected
        }
    }

    /// For values that can only be equal or not: equality holds or fails, ordering always fails.
    fileprivate func holds(isEqual: Bool) -> Bool {
        switch self {
        case .equal: isEqual
        case .notEqual: !isEqual
        case .less, .lessOrEqual, .greater, .greaterOrEqual: false
        }
    }
}
