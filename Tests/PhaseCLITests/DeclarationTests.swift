import CommandLineKit
@testable import PhaseCLI
import Testing

@Suite("Declarations")
struct DeclarationTests {
    @Test func theSampleTreeIsSound() {
        #expect(SampleTree.root.problems == [])
    }

    @Test func phasesRealTreeIsSound() {
        #expect(PhaseCommandTree.root.problems == [])
    }

    @Test func everyRealCommandThatRunsNamesAPhaseCommandOfItsOwn() {
        let commands = PhaseCommandTree.root.runnableCommands
        #expect(commands.count == 18)
        for (path, spec) in commands {
            let type = spec.command as? any PhaseCommand.Type
            #expect(type != nil, "\(path) names no PhaseCommand")
            #expect(type?.spec.name == spec.name, "\(path)")
        }
        let types = commands.compactMap { $0.spec.command.map(ObjectIdentifier.init) }
        #expect(Set(types).count == commands.count, "a command type stands for two commands")
    }

    @Test func mistakesInATreeAreEachReported() {
        let verbose = Flag("verbose", short: "v", help: "More.")
        let tree = CommandSpec("tool", abstract: "A tool.", parameters: [verbose], subcommands: [
            CommandSpec("Run_It", abstract: "Bad name."),
            CommandSpec("help", abstract: "Reserved."),
            CommandSpec("copy", abstract: "Copies.", parameters: [
                Flag("verbose", help: "Again."),
                Flag("velocity", short: "v", help: "Same short name."),
                Option("size", type: .integer(in: 1...10), default: 0, help: "A default out of range."),
                Flag("help", help: "Reserved."),
                Argument(optional: "from", type: .string, help: "Optional first."),
                Argument("to", type: .string, help: "Required after optional."),
            ], mutuallyExclusive: [[Flag("absent", help: "Not declared.")]]),
            CommandSpec("many", abstract: "Many.", parameters: [
                Argument("files", type: .string, isRepeatable: true, help: "Not last."),
                Argument("target", type: .string, help: "Last."),
            ], subcommands: [CommandSpec("sub", abstract: "Sub.")]),
            CommandSpec("copy", abstract: "Twice."),
        ])
        #expect(tree.problems == [
            "subcommand 'copy' is declared twice on 'tool'",
            "'tool help' is reserved for help",
            "command 'tool Run_It' is not kebab-case",
            "'--size' of 'tool copy' has a default '0' that must be between 1 and 10",
            "'--help' of 'tool copy' takes the name reserved for help",
            "'--verbose' is declared twice on 'tool copy'",
            "'-v' is declared twice on 'tool copy'",
            "required '<to>' of 'tool copy' follows an optional argument",
            "exclusive group on 'tool copy' names '--absent', which it does not have",
            "repeatable '<files>' of 'tool many' is not the last argument",
            "'tool many' has both subcommands and arguments",
        ])
    }
}
