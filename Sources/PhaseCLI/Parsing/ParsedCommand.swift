/// What the command line asked for: which command, and the typed value of every option, flag
/// and argument, read back through the declarations themselves.
///
/// ```swift
/// switch parsed.path {
/// case ["backfill"]: try await backfill(batchSize: parsed[Backfill.batchSize]!, dryRun: parsed[StandardParameters.dryRun])
/// case ["ledger", "prune"]: …
/// default: …
/// }
/// ```
public struct ParsedCommand: Sendable {
    /// The command's words below the root, for example `["ledger", "prune"]`; empty for the root.
    public let path: [String]
    /// Values given on the command line or taken from the environment, by display name, in order.
    let givenValues: [String: [any Sendable]]
    /// Defaults of every parameter the command accepts, by display name.
    let defaults: [String: any Sendable]
    /// Display names of the flags given.
    let flagsGiven: Set<String>

    /// The option's value: the last one given, else its environment variable's, else its
    /// default; nil when none of these exists.
    public subscript<Value>(option: Option<Value>) -> Value? {
        value(for: option.declaration)
    }

    /// The argument's value (the first, for a repeatable argument), or nil when it was left out.
    public subscript<Value>(argument: Argument<Value>) -> Value? {
        value(for: argument.declaration)
    }

    /// Whether the flag was given.
    public subscript(flag: Flag) -> Bool {
        flagsGiven.contains(flag.declaration.displayName)
    }

    /// Every value given for a repeatable option, in order; its default alone when none was.
    public func values<Value>(of option: Option<Value>) -> [Value] {
        values(for: option.declaration)
    }

    /// Every word a repeatable argument took, in order.
    public func values<Value>(of argument: Argument<Value>) -> [Value] {
        values(for: argument.declaration)
    }

    /// Whether the option or argument was given (on the command line or through its
    /// environment variable), as opposed to falling back to its default.
    public func isGiven(_ parameter: some CommandParameter) -> Bool {
        let name = parameter.declaration.displayName
        return givenValues[name] != nil || flagsGiven.contains(name)
    }

    private func value<Value>(for declaration: ParameterDeclaration) -> Value? {
        let name = declaration.displayName
        let found = declaration.kind == .argument ? givenValues[name]?.first : givenValues[name]?.last
        return (found ?? defaults[name]) as? Value
    }

    private func values<Value>(for declaration: ParameterDeclaration) -> [Value] {
        let name = declaration.displayName
        return (givenValues[name] ?? defaults[name].map { [$0] } ?? []).compactMap { $0 as? Value }
    }
}
