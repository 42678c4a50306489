/// What the command line asked for: which command, and the typed value of every option, flag
/// and argument, read back through the declarations themselves.
///
/// The command is the type its ``CommandSpec`` names, so a program makes it without looking at
/// words:
///
/// ```swift
/// guard let type = parsed.command as? any MyCommand.Type else { … }
/// try await type.init(parsed).run()
/// ```
public struct ParsedCommand: Sendable {
    /// The command's words below the root, for example `["ledger", "prune"]`; empty for the
    /// root. For messages: the command to run is ``command``.
    public let path: [String]
    /// The type the chosen command's ``CommandSpec`` names, if it names one.
    public let command: (any ParsableCommand.Type)?
    /// Values given on the command line or taken from the environment, by display name, in order.
    let givenValues: [String: [any Sendable]]
    /// Display names of the flags given.
    let flagsGiven: Set<String>

    init(path: [String], command: (any ParsableCommand.Type)?, givenValues: [String: [any Sendable]],
         flagsGiven: Set<String>) {
        self.path = path
        self.command = command
        self.givenValues = givenValues
        self.flagsGiven = flagsGiven
    }

    /// The option's value: the last one given, else its environment variable's, else its
    /// default (nil for an option without one).
    ///
    /// An option the command does not declare reads as its default, so that a value shared by
    /// several commands has one default wherever it is read.
    public subscript<Value>(option: Option<Value>) -> Value {
        option.read(givenValues[option.declaration.displayName]?.last)
    }

    /// The argument's value (the first, for a repeatable argument); nil only for an optional
    /// argument that was left out.
    public subscript<Value>(argument: Argument<Value>) -> Value {
        guard let value = argument.read(givenValues[argument.declaration.displayName]?.first) else {
            preconditionFailure("\(argument.declaration.displayName) is required but was not parsed: is it declared on this command?")
        }
        return value
    }

    /// Whether the flag was given.
    public subscript(flag: Flag) -> Bool {
        flagsGiven.contains(flag.declaration.displayName)
    }

    /// Every value given for a repeatable option, in order; empty when none was.
    public func values<Wrapped>(of option: Option<Wrapped?>) -> [Wrapped] {
        (givenValues[option.declaration.displayName] ?? []).compactMap { $0 as? Wrapped }
    }

    /// Every word a repeatable argument took, in order.
    public func values<Value>(of argument: Argument<Value>) -> [Value] {
        (givenValues[argument.declaration.displayName] ?? []).compactMap { $0 as? Value }
    }

    /// Whether the option or argument was given (on the command line or through its
    /// environment variable), as opposed to falling back to its default.
    public func isGiven(_ parameter: some CommandParameter) -> Bool {
        let name = parameter.declaration.displayName
        return givenValues[name] != nil || flagsGiven.contains(name)
    }
}
