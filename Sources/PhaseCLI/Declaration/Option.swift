/// A named option that takes a value: `--batch-size 500` or `--batch-size=500`.
///
/// Declare it once, list it in a ``CommandSpec``, and read its typed value from the
/// ``ParsedCommand``:
///
/// ```swift
/// static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
///                               help: "Rows converted in one transaction.")
/// let size = parsed[batchSize]   // Int?, never nil here because there is a default
/// ```
public struct Option<Value: Sendable>: CommandParameter {
    public let declaration: ParameterDeclaration

    /// An option named `--name`.
    ///
    /// - Parameters:
    ///   - name: kebab-case, without the dashes.
    ///   - short: a one-letter alias, used as `-x`.
    ///   - type: how the text is checked and turned into a value.
    ///   - default: the value when the option is absent (shown in help).
    ///   - valueName: the placeholder in help, `<valueName>`; the option's name when omitted.
    ///   - environmentVariable: a variable whose value stands in when the option is absent.
    ///   - isRepeatable: whether it may be given more than once (read all with
    ///     ``ParsedCommand/values(of:)-(Option<V>)``).
    ///   - help: one sentence for the help text.
    public init(_ name: String, short: Character? = nil, type: ValueType<Value>, default: Value? = nil,
                valueName: String? = nil, environmentVariable: String? = nil, isRepeatable: Bool = false,
                help: String) {
        declaration = .valued(.option, name: name, shortName: short, help: help, type: type, default: `default`,
                              valueName: valueName, environmentVariable: environmentVariable,
                              isRepeatable: isRepeatable)
    }
}
