/// One option, flag or positional argument as the parser and the help writer see it: its
/// name, help and rules, with the value type erased.
///
/// You make these through ``Option``, ``Flag`` and ``Argument``; the type is public only so
/// that those can hand it to a ``CommandSpec``.
public struct ParameterDeclaration: Sendable {
    enum Kind: Sendable { case option, flag, argument }

    let kind: Kind
    /// The kebab-case name, without dashes or angle brackets.
    let name: String
    let shortName: Character?
    let help: String
    /// The placeholder in usage and help: `<valueName>`.
    let valueName: String
    let isRepeatable: Bool
    /// For arguments: whether it must be given.
    let isRequired: Bool
    let environmentVariable: String?
    let defaultText: String?
    let constraint: String?
    let allowedValues: [String]
    /// Nil for flags.
    let parse: (@Sendable (String) -> Result<any Sendable, InvalidValue>)?

    /// How users and messages spell it: `--batch-size` or `<path>`.
    var displayName: String {
        kind == .argument ? "<\(valueName)>" : "--\(name)"
    }

    /// The spelling with its short form, when it has one: `-q, --quiet`.
    var spellings: String {
        shortName.map { "-\($0), \(displayName)" } ?? displayName
    }

    /// Whether a value follows the name on the command line.
    var takesValue: Bool { kind == .option }

    static func valued<Value>(_ kind: Kind, name: String, shortName: Character? = nil, help: String,
                              type: ValueType<Value>, default defaultValue: Value?, valueName: String?,
                              environmentVariable: String? = nil, isRepeatable: Bool,
                              isRequired: Bool = false) -> ParameterDeclaration {
        ParameterDeclaration(
            kind: kind, name: name, shortName: shortName, help: help, valueName: valueName ?? name,
            isRepeatable: isRepeatable, isRequired: isRequired, environmentVariable: environmentVariable,
            defaultText: defaultValue.map(type.format),
            constraint: type.constraint, allowedValues: type.allowedValues,
            parse: { text in type.parse(text).map { $0 as any Sendable } })
    }
}

/// Something a command declares: an ``Option``, a ``Flag`` or an ``Argument``.
public protocol CommandParameter: Sendable {
    /// The type-erased declaration the parser and the help writer read.
    var declaration: ParameterDeclaration { get }
}
