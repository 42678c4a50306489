/// A named option that takes a value: `--batch-size 500` or `--batch-size=500`.
///
/// Declare it once, list it in a ``CommandSpec``, and read its typed value from the
/// ``ParsedCommand``. An option with a default reads as its value type; one without reads as
/// an optional:
///
/// ```swift
/// static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
///                               help: "Rows converted in one transaction.")
/// static let window = Option("window", type: .duration, help: "The plan's window when omitted.")
/// let size: Int = parsed[batchSize]
/// let window: Duration? = parsed[window]
/// ```
public struct Option<Value: Sendable>: CommandParameter {
    public let declaration: ParameterDeclaration
    /// The value read back: the parsed one when there is one, else the default.
    let read: @Sendable ((any Sendable)?) -> Value

    /// An option named `--name` with a default, read as `Value`.
    ///
    /// - Parameters:
    ///   - name: kebab-case, without the dashes.
    ///   - short: a one-letter alias, used as `-x`.
    ///   - type: how the text is checked and turned into a value.
    ///   - default: the value when the option is absent (shown in help).
    ///   - valueName: the placeholder in help, `<valueName>`; the option's name when omitted.
    ///   - environmentVariable: a variable whose value stands in when the option is absent.
    ///   - help: one sentence for the help text.
    public init(_ name: String, short: Character? = nil, type: ValueType<Value>, default defaultValue: Value,
                valueName: String? = nil, environmentVariable: String? = nil, help: String) {
        declaration = .valued(.option, name: name, shortName: short, help: help, type: type, default: defaultValue,
                              valueName: valueName, environmentVariable: environmentVariable, isRepeatable: false)
        read = { ($0 as? Value) ?? defaultValue }
    }

    /// An option named `--name` without a default, read as an optional: nil when absent.
    ///
    /// - Parameters:
    ///   - isRepeatable: whether it may be given more than once (read every value with
    ///     ``ParsedCommand/values(of:)``).
    ///   - The others: as for the option with a default.
    public init<Wrapped: Sendable>(_ name: String, short: Character? = nil, type: ValueType<Wrapped>,
                                   valueName: String? = nil, environmentVariable: String? = nil,
                                   isRepeatable: Bool = false, help: String) where Value == Wrapped? {
        declaration = .valued(.option, name: name, shortName: short, help: help, type: type, default: nil,
                              valueName: valueName, environmentVariable: environmentVariable,
                              isRepeatable: isRepeatable)
        read = { $0 as? Wrapped }
    }
}
