/// A named switch without a value: `--dry-run`. Absent means off.
///
/// ```swift
/// static let dryRun = Flag("dry-run", help: "Show what would change without changing anything.")
/// if parsed[dryRun] { … }
/// ```
public struct Flag: CommandParameter {
    public let declaration: ParameterDeclaration

    /// A flag named `--name`, with an optional one-letter alias `-x`.
    public init(_ name: String, short: Character? = nil, help: String) {
        declaration = ParameterDeclaration(
            kind: .flag, name: name, shortName: short, help: help, valueName: name, isRepeatable: true,
            isRequired: false, environmentVariable: nil, defaultText: nil,
            constraint: nil, allowedValues: [], parse: nil)
    }
}
