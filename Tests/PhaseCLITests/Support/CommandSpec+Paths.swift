import CommandLineKit

extension CommandSpec {
    /// Every command's words below this one, this one's own (empty) path first.
    var commandPaths: [[String]] {
        [[]] + subcommands.flatMap { sub in sub.commandPaths.map { [sub.name] + $0 } }
    }

    /// The commands that run something (those without subcommands), each with its words.
    var runnableCommands: [(path: [String], spec: CommandSpec)] {
        subcommands.isEmpty ? [([], self)]
            : subcommands.flatMap { sub in sub.runnableCommands.map { ([sub.name] + $0.path, $0.spec) } }
    }
}
