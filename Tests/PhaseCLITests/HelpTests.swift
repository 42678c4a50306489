import CommandLineKit
import PhaseCLI
import Testing

@Suite("Help")
struct HelpTests {
    /// The golden file of a command of `phase`'s real tree: `help-phase-ledger-prune.txt`.
    static func goldenName(_ path: [String]) -> String {
        (["help", "phase"] + path).joined(separator: "-") + ".txt"
    }

    @Test("every real command's help matches its golden file", arguments: PhaseCommandTree.root.commandPaths)
    func helpMatchesGolden(path: [String]) async throws {
        let run = await ProgramRun.of(path + ["--help"], program: PhaseCommandTree.program)
        #expect(run.exitCode == .done)
        #expect(run.diagnostics == "")
        try Golden.expect(run.output, matches: Self.goldenName(path))
    }

    @Test func everyHelpGoldenFileBelongsToARealCommand() throws {
        #expect(try Golden.names().filter { $0.hasPrefix("help-") } == Set(PhaseCommandTree.root.commandPaths.map(Self.goldenName)))
    }

    @Test("every line of help fits in eighty columns, on the real tree and the sample",
          arguments: [PhaseCommandTree.program, SampleTree.program])
    func everyLineFitsInEightyColumns(program: CommandLineProgram) {
        for path in program.root.commandPaths {
            let text = program.parse(path + ["-h"]).help ?? ""
            #expect(!text.isEmpty)
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "\(path): \(line)")
                #expect(line.last != " ", "\(path): trailing space in '\(line)'")
            }
        }
    }

    @Test func helpFlagHelpCommandAndShortFlagAgree() async {
        let flag = await ProgramRun.of(["ledger", "prune", "--help"])
        let short = await ProgramRun.of(["ledger", "prune", "-h"])
        let command = await ProgramRun.of(["help", "ledger", "prune"])
        let flagFirst = await ProgramRun.of(["--help", "ledger", "prune"])
        #expect(flag.output.hasPrefix("OVERVIEW: Delete ledger rows"))
        for run in [short, command, flagFirst] {
            #expect(run.exitCode == .done)
            #expect(run.output == flag.output)
        }
    }

    @Test func helpWithoutACommandIsTheRootsHelp() async {
        let help = await ProgramRun.of(["help"])
        let root = await ProgramRun.of(["--help"])
        #expect(help.exitCode == .done)
        #expect(help.output.hasPrefix("OVERVIEW: Move one feature's"))
        #expect(help.output == root.output)
    }

    @Test func helpWinsOverOtherMistakesOnTheLine() async {
        let run = await ProgramRun.of(["backfill", "--batch-size", "0", "--help"])
        #expect(run.exitCode == .done)
        #expect(run.output.hasPrefix("OVERVIEW: Convert rows"))
        #expect(run.diagnostics == "")
    }

    @Test func helpAfterDoubleDashIsAnArgument() {
        #expect(SampleTree.program.parse(["check", "--", "--help"]).command?[SampleTree.step] == "--help")
    }

    @Test func helpNamesCommandsUpToTheFirstOption() {
        #expect(SampleTree.program.parse(["help", "switch", "--format", "json"]).help?
            .hasPrefix("OVERVIEW: Change the writer path") == true)
    }

    @Test func helpForAnUnknownCommandIsAUsageError() async {
        let run = await ProgramRun.of(["help", "stauts"])
        #expect(run.exitCode == .usage)
        #expect(run.output == "")
        #expect(run.diagnostics.hasPrefix("Error: unknown command 'stauts'; did you mean 'status'?\n"))
    }

    @Test func longLabelsPutTheirDescriptionOnTheNextLine() throws {
        let long = Option("a-rather-long-option-name", type: .string, help: "Described below the label.")
        let short = Flag("short", help: "Described beside the label.")
        let program = CommandLineProgram(root: CommandSpec("tool", abstract: "A tool.", parameters: [long, short]))
        let help = try #require(program.parse(["--help"]).help)
        #expect(help.contains("""
              --a-rather-long-option-name <a-rather-long-option-name>
                                      Described below the label.
              --short                 Described beside the label.
            """))
    }
}
