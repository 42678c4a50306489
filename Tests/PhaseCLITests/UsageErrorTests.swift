import CommandLineKit
import PhaseCLI
import Testing

@Suite("Usage errors")
struct UsageErrorTests {
    private func expectUsageError(_ words: [String], _ expected: String, environment: [String: String] = [:],
                                  sourceLocation: SourceLocation = #_sourceLocation) async {
        let run = await ProgramRun.of(words, environment: environment) { _ in
            Issue.record("the command ran", sourceLocation: sourceLocation)
            return .done
        }
        #expect(run.exitCode == .usage, sourceLocation: sourceLocation)
        #expect(run.output == "", sourceLocation: sourceLocation)
        #expect(run.diagnostics == expected, sourceLocation: sourceLocation)
    }

    @Test func anOutOfRangeValueNamesTheOptionAndTheRange() async {
        await expectUsageError(["backfill", "--batch-size", "0"], """
            Error: invalid value '0' for '--batch-size': must be between 1 and 100000
            Usage: phase backfill [--batch-size <batch-size>] [--pause <pause>] [--dry-run]
              See 'phase backfill --help' for more information.

            """)
    }

    @Test func anUnknownOptionSuggestsTheClosestOne() async {
        await expectUsageError(["backfill", "--batchsize", "10"], """
            Error: unknown option '--batchsize'; did you mean '--batch-size'?
            Usage: phase backfill [--batch-size <batch-size>] [--pause <pause>] [--dry-run]
              See 'phase backfill --help' for more information.

            """)
        await expectUsageError(["status", "--formt", "json"], """
            Error: unknown option '--formt'; did you mean '--format'?
            Usage: phase status
              See 'phase status --help' for more information.

            """)
    }

    @Test func anUnknownOptionWithNothingCloseGetsNoSuggestion() async {
        await expectUsageError(["status", "--colourful"], """
            Error: unknown option '--colourful'
            Usage: phase status
              See 'phase status --help' for more information.

            """)
        await expectUsageError(["status", "-x"], """
            Error: unknown option '-x'
            Usage: phase status
              See 'phase status --help' for more information.

            """)
    }

    @Test func anUnknownCommandSuggestsTheClosestOne() async {
        await expectUsageError(["stauts"], """
            Error: unknown command 'stauts'; did you mean 'status'?
            Usage: phase [--database-url <url>] [--plan <dir>] [--format <format>] [--quiet]
                   [--verbose] <subcommand>
              See 'phase --help' for more information.

            """)
        await expectUsageError(["ledger", "prnue"], """
            Error: unknown command 'prnue'; did you mean 'prune'?
            Usage: phase ledger <subcommand>
              See 'phase ledger --help' for more information.

            """)
        await expectUsageError(["migrate"], """
            Error: unknown command 'migrate'
            Usage: phase [--database-url <url>] [--plan <dir>] [--format <format>] [--quiet]
                   [--verbose] <subcommand>
              See 'phase --help' for more information.

            """)
    }

    @Test func aMissingValueIsNamed() async {
        await expectUsageError(["backfill", "--batch-size"], """
            Error: missing value for '--batch-size'
            Usage: phase backfill [--batch-size <batch-size>] [--pause <pause>] [--dry-run]
              See 'phase backfill --help' for more information.

            """)
        let beforeAnotherOption = SampleTree.program.parse(["--plan", "--quiet", "status"]).usageError
        #expect(beforeAnotherOption?.message == "missing value for '--plan'")
    }

    @Test func aMissingRequiredArgumentListsItsChoices() async {
        await expectUsageError(["switch"], """
            Error: missing argument '<path>' (one of: legacy, modern)
            Usage: phase switch <path> [--dry-run]
              See 'phase switch --help' for more information.

            """)
    }

    @Test func aWrongChoiceListsTheChoicesAndSuggestsOne() async {
        await expectUsageError(["switch", "modrn"], """
            Error: invalid value 'modrn' for '<path>': must be one of legacy, modern; did you mean 'modern'?
            Usage: phase switch <path> [--dry-run]
              See 'phase switch --help' for more information.

            """)
    }

    @Test func conflictingFlagsAreNamed() async {
        await expectUsageError(["observe", "--follow", "--duration", "1m"], """
            Error: '--follow' and '--duration' cannot be used together
            Usage: phase observe [--follow] [--duration <duration>]
              See 'phase observe --help' for more information.

            """)
    }

    @Test func aCommandGroupNeedsASubcommand() async {
        await expectUsageError(["ledger"], """
            Error: 'phase ledger' needs a subcommand
            Usage: phase ledger <subcommand>
              See 'phase ledger --help' for more information.

            """)
        let bare = SampleTree.program.parse([]).usageError
        #expect(bare?.message == "'phase' needs a subcommand")
    }

    @Test func otherMistakesEachHaveTheirOwnMessage() {
        let cases: [([String], String)] = [
            (["status", "extra"], "unexpected argument 'extra'"),
            (["switch", "modern", "legacy"], "unexpected argument 'legacy'"),
            (["--dry-run=yes", "init"], "unknown option '--dry-run'"),
            (["init", "--dry-run=yes"], "'--dry-run' does not take a value"),
            (["--plan", "a", "--plan", "b", "status"], "'--plan' may be given only once"),
            (["--format", "xml", "status"], "invalid value 'xml' for '--format': must be one of text, json"),
            (["ledger", "prune", "--older-than", "12h"], "invalid value '12h' for '--older-than': must be at least 1d"),
            (["backfill", "--pause", "5"],
             "invalid value '5' for '--pause': missing a unit after '5' (use ms, s, m, h or d)"),
            (["help", "ledger", "prnue"], "unknown command 'prnue'; did you mean 'prune'?"),
            (["histroy"], "unknown command 'histroy'; did you mean 'history'?"),
            (["plot"], "unknown command 'plot'"),
        ]
        for (words, message) in cases {
            #expect(SampleTree.program.parse(words).usageError?.message == message, "\(words)")
        }
    }

    @Test func aBadValueFromTheEnvironmentNamesTheVariable() {
        let program = CommandLineProgram(root: CommandSpec("tool", abstract: "A tool.", parameters: [
            Option("batch-size", type: .integer(in: 1...10), environmentVariable: "BATCH_SIZE", help: "Rows."),
        ]))
        let error = program.parse([], environment: ["BATCH_SIZE": "0"]).usageError
        #expect(error?.message == "invalid value '0' in BATCH_SIZE for '--batch-size': must be between 1 and 10")
    }

    @Test func passwordsInEchoedValuesAreRedacted() async {
        let url = "postgresql://app:\(TestRedactor.password)@db/app"
        let run = await ProgramRun.of(["status", url])
        #expect(run.exitCode == .usage)
        #expect(run.diagnostics.hasPrefix("Error: unexpected argument 'postgresql://app:[redacted]@db/app'\n"))
        #expect(!run.diagnostics.contains(TestRedactor.password))
        let asValue = await ProgramRun.of(["backfill", "--batch-size", url])
        #expect(!asValue.diagnostics.contains(TestRedactor.password))
        #expect(asValue.diagnostics.contains("[redacted]"))
    }
}
