/// A positional argument: `phase switch modern`, `phase check expand`.
///
/// Arguments are matched in the order the command declares them. A required argument reads
/// as its value type, an optional one as an optional:
///
/// ```swift
/// static let path = Argument("path", type: .choice(SavePath.self), help: "The writer to switch to.")
/// static let step = Argument(optional: "step", type: .string, help: "The next step when omitted.")
/// let target: SavePath = parsed[path]
/// let chosen: String? = parsed[step]
/// ```
public struct Argument<Value: Sendable>: CommandParameter {
    public let declaration: ParameterDeclaration
    /// The value read back from what the parser kept.
    let read: @Sendable ((any Sendable)?) -> Value?

    /// A required argument shown as `<name>`.
    ///
    /// - Parameters:
    ///   - name: kebab-case; the placeholder in usage and help.
    ///   - type: how the text is checked and turned into a value.
    ///   - isRepeatable: whether it takes every remaining word (only the last argument may; read
    ///     them all with ``ParsedCommand/values(of:)``).
    ///   - help: one sentence for the help text.
    public init(_ name: String, type: ValueType<Value>, isRepeatable: Bool = false, help: String) {
        declaration = .valued(.argument, name: name, help: help, type: type, default: nil, valueName: nil,
                              isRepeatable: isRepeatable, isRequired: true)
        read = { $0 as? Value }
    }

    /// An argument that may be left out (only later arguments may be optional too), shown as
    /// `[<name>]` and read as nil when absent.
    public init<Wrapped: Sendable>(optional name: String, type: ValueType<Wrapped>, help: String) where Value == Wrapped? {
        declaration = .valued(.argument, name: name, help: help, type: type, default: nil, valueName: nil,
                              isRepeatable: false, isRequired: false)
        read = { .some($0 as? Wrapped) }
    }
}
