/// A positional argument: `phase switch modern`, `phase check expand`.
///
/// Arguments are matched in the order the command declares them.
///
/// ```swift
/// static let path = Argument("path", type: .choice(WriterPath.self), help: "The writer to switch to.")
/// let target = parsed[path]   // WriterPath?, never nil here because it is required
/// ```
public struct Argument<Value: Sendable>: CommandParameter {
    public let declaration: ParameterDeclaration

    /// An argument shown as `<name>`.
    ///
    /// - Parameters:
    ///   - name: kebab-case; the placeholder in usage and help.
    ///   - type: how the text is checked and turned into a value.
    ///   - isOptional: whether it may be left out (only later arguments may be optional too).
    ///   - isRepeatable: whether it takes every remaining word (only the last argument may).
    ///   - help: one sentence for the help text.
    public init(_ name: String, type: ValueType<Value>, isOptional: Bool = false, isRepeatable: Bool = false,
                help: String) {
        declaration = .valued(.argument, name: name, help: help, type: type, default: nil, valueName: nil,
                              isRepeatable: isRepeatable, isRequired: !isOptional)
    }
}
