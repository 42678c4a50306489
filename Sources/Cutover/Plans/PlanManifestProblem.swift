/// What is wrong at one place in a plan manifest; the description reads `expected …; found …`.
///
/// Found text is quoted, escaped and cut short (see ``PlanManifestError``), so
/// the description stays one line whatever the manifest holds.
public enum PlanManifestProblem: Sendable, Hashable, CustomStringConvertible {
    /// How a length is counted.
    public enum LengthUnit: String, Sendable, Hashable {
        /// Unicode scalar values.
        case characters
        /// UTF-8 bytes.
        case bytes
    }

    /// The manifest is larger than ``PlanLimits/maximumManifestByteCount``.
    case tooLarge(byteCount: Int)
    /// The bytes are not UTF-8; the position is of the first bad sequence.
    case invalidUTF8(line: Int, column: Int)
    /// The document ends before its JSON is complete.
    case truncated
    /// A character JSON does not allow at this position.
    case invalidSyntax(line: Int, column: Int)
    /// More follows a complete JSON document.
    case trailingData(line: Int, column: Int)
    /// Arrays and objects nest deeper than the parser accepts.
    case nestingTooDeep(maximum: Int)
    /// An object names the key more than once.
    case repeatedKey(String)
    /// An object has keys its place does not allow.
    case unknownKeys([String], allowed: [String])
    /// A required key is absent.
    case missingKey(expected: [JSONKind])
    /// A value of the wrong JSON kind.
    case wrongType(expected: [JSONKind], found: JSONKind)
    /// `format` is not the one this version reads; the literal as written.
    case unsupportedFormat(found: String)
    /// A step's kind is not one of expand, switch, backfill, contract.
    case unknownStepKind(String)
    /// A step comes where the order expand, switch, backfill, contract does not allow it.
    case stepOutOfOrder(PlanStep.Kind, previous: PlanStep.Kind?)
    /// The plan has no step of this kind, which it requires.
    case missingStep(PlanStep.Kind)
    /// A list has too few or too many entries.
    case countOutOfRange(found: Int, allowed: ClosedRange<Int>)
    /// Text is empty or too long.
    case lengthOutOfRange(found: Int, allowed: ClosedRange<Int>, unit: LengthUnit)
    /// Text holds a control character where none is allowed.
    case controlCharacter(Unicode.Scalar)
    /// A number that is not an integer in the allowed range; the literal as written.
    case integerOutOfRange(found: String, allowed: ClosedRange<Int>)
    /// A number outside the allowed range; the literal as written.
    case numberOutOfRange(found: String, allowed: ClosedRange<Double>)
    /// `modernWriterWindow` is not a duration from `0s` to `366d`.
    case invalidDuration(String)
    /// A duration longer than the key allows (`targetBatchTime`: 60 s); the text as written.
    case durationTooLong(String, maximum: Duration)
    /// A SQL file's path breaks a path rule.
    case invalidPath(String, PlanPathProblem)
    /// A list of SQL files names the same file twice.
    case repeatedFile(String)
    /// A check's `expect` is not a ``CheckExpectation``.
    case invalidExpectation(String)
    /// A file's `serverVersion` is not a ``ServerVersionRange``.
    case invalidServerVersion(String)
    /// A check has both or neither of `sql` and `sqlFile`; the number it has.
    case checkQueryCount(found: Int)
    /// Two checks of one step share a name.
    case repeatedCheckName(String)
    /// `format` is one this version reads, but not the one this reader takes: a declarative
    /// plan given where a plan of SQL files is read, or the other way round.
    case wrongFormat(found: Int, expected: Int)
    /// An operation of a declarative plan is not one of ``DeclarativeOperation/names``.
    case unknownOperation(String)
    /// An entry of `operations` does not have exactly one key; the number it has.
    case operationKeyCount(found: Int)
    /// Exactly one of these keys is required; the number present.
    case exactlyOne([String], found: Int)
    /// A value that must be one of a few spellings.
    case notOneOf(String, allowed: [String])
    /// An expression or type that is not one SQL expression over the row.
    case invalidExpression(SQLExpressionProblem)
    /// An expression reads a column the plan does not know there; `known` lists what it may read.
    case unknownColumn(String, known: [String])
    /// A column has two parts in the plan (the key and a dropped column, two operations).
    case repeatedColumn(String)
    /// A NOT NULL column without `up` or `default`: its existing rows could never be filled,
    /// so contract could never complete.
    case contractNeedsBackfill(column: String)
    /// `alter_column`'s `up` or `down` names other columns than its `to` or `from`.
    case expressionColumns(expected: [String], found: [String])
    /// A hand-written file under `compiled/`, where the compiler puts its own.
    case reservedPath(String)
    /// `rename_table` shares its plan with other operations (`count` in all).
    case renameNotAlone(count: Int)
    /// Two application statements share a name.
    case repeatedStatementName(String)
    /// An application statement's `sql` holds `found` statements instead of one.
    case statementCount(found: Int)

    /// `expected …; found …`, the found part escaped and cut short.
    public var description: String {
        let (expected, found) = parts
        return "expected \(expected); found \(found)"
    }

    private var parts: (expected: String, found: String) {
        switch self {
        case .tooLarge(let count):
            ("at most \(PlanLimits.maximumManifestByteCount) bytes", "\(count) bytes")
        case .invalidUTF8(let line, let column):
            ("UTF-8 text", "an invalid byte sequence at line \(line), column \(column)")
        case .truncated:
            ("a complete JSON document", "its end cut short")
        case .invalidSyntax(let line, let column):
            ("JSON", "an unexpected character at line \(line), column \(column)")
        case .trailingData(let line, let column):
            ("one JSON document", "more data at line \(line), column \(column)")
        case .nestingTooDeep(let maximum):
            ("at most \(maximum) levels of nesting", "deeper nesting")
        case .repeatedKey(let key):
            ("each key once", "\(DisplayText.quoted(key)) more than once")
        case .unknownKeys(let keys, let allowed):
            ("only the keys \(allowed.joined(separator: ", "))", Self.unknownKeysText(keys))
        case .missingKey(let expected):
            (Self.kindsText(expected), "no value (the key is required)")
        case .wrongType(let expected, let found):
            (Self.kindsText(expected), found.withArticle)
        case .unsupportedFormat(let found):
            ("format \(PlanLimits.format) or \(PlanLimits.declarativeFormat), the ones this version reads", Self.formatText(found))
        case .unknownStepKind(let kind):
            ("one of \(PlanStep.Kind.allCases.map(\.rawValue).joined(separator: ", "))", DisplayText.quoted(kind))
        case .stepOutOfOrder(let kind, let previous):
            (Self.orderText(after: previous), DisplayText.quoted(kind.rawValue))
        case .missingStep(let kind):
            ("\(kind == .expand ? "an" : "a") \(kind) step", "none")
        case .countOutOfRange(let count, let allowed):
            ("\(Self.rangeText(allowed)) entries", "\(count)")
        case .lengthOutOfRange(let length, let allowed, let unit):
            ("\(Self.rangeText(allowed)) \(unit.rawValue)", "\(length)")
        case .controlCharacter(let scalar):
            ("text without control characters", DisplayText.codePoint(scalar))
        case .integerOutOfRange(let literal, let allowed):
            ("an integer from \(allowed.lowerBound) to \(allowed.upperBound)", DisplayText.unquoted(literal))
        case .numberOutOfRange(let literal, let allowed):
            ("a number from \(Self.decimalText(allowed.lowerBound)) to \(Self.decimalText(allowed.upperBound))",
             DisplayText.unquoted(literal))
        case .invalidDuration(let text):
            ("a duration such as 30s, 10m, 2h or 7d, from 0s to 366d", DisplayText.quoted(text))
        case .durationTooLong(let text, let maximum):
            ("a duration from 0s to \(DurationText.format(maximum))", DisplayText.quoted(text))
        case .invalidPath(let path, let problem):
            Self.pathParts(path, problem)
        case .repeatedFile(let path):
            ("each file once in the list", "\(DisplayText.quoted(path)) again")
        case .invalidExpectation(let text):
            ("a comparison such as = 0, <= 100, != 0, = true, = 'text' or is null", DisplayText.quoted(text))
        case .invalidServerVersion(let text):
            ("a PostgreSQL major version range such as >= 18, < 18 or = 15", DisplayText.quoted(text))
        case .checkQueryCount(let count):
            ("exactly one of sql and sqlFile", count == 0 ? "neither" : "both")
        case .repeatedCheckName(let name):
            ("a name no other check of the step has", "\(DisplayText.quoted(name)) again")
        case .wrongFormat(let found, let expected):
            ("format \(expected) (\(Self.formatName(expected))) here", "format \(found) (\(Self.formatName(found)))")
        case .unknownOperation(let name):
            ("one of \(DeclarativeOperation.names.joined(separator: ", "))", DisplayText.quoted(name))
        case .operationKeyCount(let count):
            ("an object with one key, the operation's name", "\(count) keys")
        case .exactlyOne(let keys, let count):
            ("exactly one of \(keys.joined(separator: ", "))", count == 0 ? "none" : "\(count)")
        case .notOneOf(let text, let allowed):
            ("one of \(allowed.joined(separator: ", "))", DisplayText.quoted(text))
        case .invalidExpression(let problem):
            ("one SQL expression over the row", problem.description)
        case .unknownColumn(let name, let known):
            ("a column the plan knows here (\(known.joined(separator: ", "))); list other existing columns in \"columns\"",
             DisplayText.quoted(name))
        case .repeatedColumn(let name):
            ("each column in one part of the plan", "\(DisplayText.quoted(name)) again")
        case .contractNeedsBackfill(let column):
            ("up or default for NOT NULL column \(DisplayText.quoted(column)), so that backfill can fill its old rows",
             "neither (contract could never complete)")
        case .expressionColumns(let expected, let found):
            ("one expression for each of \(expected.joined(separator: ", "))", found.isEmpty ? "none" : found.joined(separator: ", "))
        case .reservedPath(let path):
            ("a hand-written file outside compiled/, which holds the compiled files", DisplayText.quoted(path))
        case .renameNotAlone(let count):
            ("rename_table as the plan's only operation (rename in a plan of its own, before or after the others)",
             "\(count) operations")
        case .repeatedStatementName(let name):
            ("a statement name used once", "\(DisplayText.quoted(name)) again")
        case .statementCount(let count):
            ("exactly one SQL statement (a rehearsal replays each on its own)", "\(count)")
        }
    }

    private static func formatName(_ format: Int) -> String {
        format == PlanLimits.declarativeFormat ? "a declarative plan" : "a plan of SQL files"
    }

    private static func pathParts(_ path: String, _ problem: PlanPathProblem) -> (expected: String, found: String) {
        let shown = DisplayText.quoted(path)
        return switch problem {
        case .absolute: ("a path relative to the plan folder", shown)
        case .parentComponent: ("a path inside the plan folder, without \"..\"", shown)
        case .emptyComponent: ("a path without empty or \".\" components", shown)
        case .backslash: ("/ as the only separator", "a backslash in \(shown)")
        case .forbiddenCharacter(let scalar):
            ("only A-Z, a-z, 0-9, _, ., / and - in a path", "\(DisplayText.codePoint(scalar)) in \(shown)")
        case .notSQLFile: ("a file name ending in .sql", shown)
        }
    }

    /// `contract`, `backfill or contract`, `switch, backfill or contract`.
    private static func kindList(_ kinds: [PlanStep.Kind]) -> String {
        let names = kinds.map(\.rawValue)
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }

    private static func orderText(after previous: PlanStep.Kind?) -> String {
        guard let previous else { return "expand as the first step" }
        let later = PlanStep.Kind.allCases.drop { $0 != previous }.dropFirst()
        guard !later.isEmpty else { return "no step after contract" }
        return "\(kindList(Array(later))) after \(previous) (the order is expand, switch, backfill, contract, "
            + "each at most once)"
    }

    private static func kindsText(_ kinds: [JSONKind]) -> String {
        kinds.map(\.withArticle).joined(separator: " or ")
    }

    private static func rangeText(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound) to \(range.upperBound)"
    }

    /// `0`, `100`, `0.5`: whole numbers without a fraction.
    private static func decimalText(_ number: Double) -> String {
        let text = String(number)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    private static func formatText(_ literal: String) -> String {
        guard let format = Int(literal), format > PlanLimits.formats.max() ?? PlanLimits.format else { return DisplayText.unquoted(literal) }
        return "format \(format), written for a newer version of Cutover"
    }

    /// At most five names, quoted, then how many more.
    private static func unknownKeysText(_ keys: [String]) -> String {
        let shown = keys.prefix(5).map { DisplayText.quoted($0) }.joined(separator: ", ")
        let more = keys.count > 5 ? " and \(keys.count - 5) more" : ""
        return (keys.count == 1 ? "unknown key " : "unknown keys ") + shown + more
    }
}
