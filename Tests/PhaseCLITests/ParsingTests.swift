import CommandLineKit
import PhaseCLI
import Testing

@Suite("Parsing")
struct ParsingTests {
    private func parse(_ words: [String], environment: [String: String] = [:]) throws -> ParsedCommand {
        let outcome = PhaseTree.program.parse(words, environment: environment)
        return try #require(outcome.command, "not a command: \(outcome)")
    }

    @Test func optionValueFollowsAsTheNextWordOrAfterAnEqualsSign() throws {
        #expect(try parse(["backfill", "--batch-size", "500"])[PhaseTree.batchSize] == 500)
        #expect(try parse(["backfill", "--batch-size=500"])[PhaseTree.batchSize] == 500)
        #expect(try parse(["backfill", "-b", "250"])[PhaseTree.batchSize] == 250)
    }

    @Test func anEqualsSignValueMayItselfContainEqualsSigns() throws {
        let parsed = try parse(["--database-url=host=db user=app", "status"])
        #expect(parsed[PhaseTree.databaseURL] == "host=db user=app")
    }

    @Test func absentOptionsTakeTheirDefaultsAndAreNotGiven() throws {
        let parsed = try parse(["backfill"])
        #expect(parsed[PhaseTree.batchSize] == 1000)
        #expect(parsed[PhaseTree.pause] == .zero)
        #expect(parsed[PhaseTree.format] == .text)
        #expect(parsed[PhaseTree.databaseURL] == nil)
        #expect(!parsed.isGiven(PhaseTree.batchSize))
        #expect(try parse(["backfill", "--batch-size", "1000"]).isGiven(PhaseTree.batchSize))
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommandName() throws {
        for words in [["--format", "json", "--plan", "p", "status"], ["status", "--format=json", "--plan", "p"],
                      ["--format", "json", "status", "--plan", "p"]] {
            let parsed = try parse(words)
            #expect(parsed.path == ["status"])
            #expect(parsed[PhaseTree.format] == .json)
            #expect(parsed[PhaseTree.plan] == "p")
        }
    }

    @Test func globalOptionsWorkAroundNestedSubcommands() throws {
        let parsed = try parse(["ledger", "--quiet", "prune", "--format", "json", "--older-than", "2d"])
        #expect(parsed.path == ["ledger", "prune"])
        #expect(parsed[PhaseTree.quiet])
        #expect(parsed[PhaseTree.format] == .json)
        #expect(parsed[PhaseTree.olderThan] == .seconds(2 * 86_400))
    }

    @Test func flagsAreOffUnlessGiven() throws {
        #expect(try !parse(["switch", "modern"])[PhaseTree.dryRun])
        #expect(try parse(["switch", "modern", "--dry-run"])[PhaseTree.dryRun])
        #expect(try parse(["-q", "status"])[PhaseTree.quiet])
    }

    @Test func positionalArgumentsAreTypedAndOptionalOnesMayBeLeftOut() throws {
        #expect(try parse(["switch", "legacy"])[PhaseTree.path] == .legacy)
        #expect(try parse(["switch", "--dry-run", "modern"])[PhaseTree.path] == .modern)
        #expect(try parse(["check", "expand"])[PhaseTree.step] == "expand")
        let bare = try parse(["check"])
        #expect(bare[PhaseTree.step] == nil)
        #expect(!bare.isGiven(PhaseTree.step))
    }

    @Test func doubleDashEndsOptionsSoDashedWordsBecomeArguments() throws {
        let parsed = try parse(["check", "--only", "a", "--", "--odd-step-name"])
        #expect(parsed[PhaseTree.step] == "--odd-step-name")
        #expect(parsed.values(of: PhaseTree.only) == ["a"])
        let usage = try #require(PhaseTree.program.parse(["check", "--", "a", "--dry-run"]).usageError)
        #expect(usage.message == "unexpected argument '--dry-run'")
    }

    @Test func repeatableOptionsKeepEveryValueInOrder() throws {
        let parsed = try parse(["check", "--only", "b", "--only=a", "--only", "c"])
        #expect(parsed.values(of: PhaseTree.only) == ["b", "a", "c"])
        #expect(parsed[PhaseTree.only] == "c")
        #expect(try parse(["check"]).values(of: PhaseTree.only).isEmpty)
        #expect(try parse(["backfill"])[PhaseTree.batchSize] == 1000)
    }

    @Test func subcommandsNestAndTheirPathIsReported() throws {
        #expect(try parse(["ledger", "prune"]).path == ["ledger", "prune"])
        #expect(try parse(["demo"]).path == ["demo"])
    }

    @Test func anEnvironmentVariableStandsInForAnAbsentOption() throws {
        let environment = ["DATABASE_URL": "postgresql://db/app"]
        let fromEnvironment = try parse(["status"], environment: environment)
        #expect(fromEnvironment[PhaseTree.databaseURL] == "postgresql://db/app")
        #expect(fromEnvironment.isGiven(PhaseTree.databaseURL))
        let fromCommandLine = try parse(["status", "--database-url", "postgresql://other/app"], environment: environment)
        #expect(fromCommandLine[PhaseTree.databaseURL] == "postgresql://other/app")
        #expect(try parse(["status"], environment: ["DATABASE_URL": ""])[PhaseTree.databaseURL] == nil)
    }

    @Test func negativeNumbersAreValuesNotOptions() throws {
        let error = try #require(PhaseTree.program.parse(["history", "--limit", "-3"]).usageError)
        #expect(error.message == "invalid value '-3' for '--limit': must be at least 1")
    }

    @Test func mutuallyExclusiveFlagsAndOptionsAreRefusedTogether() throws {
        #expect(try parse(["observe", "--follow"])[PhaseTree.follow])
        #expect(try parse(["observe", "--duration", "5m"])[PhaseTree.duration] == .seconds(300))
        let local = try #require(PhaseTree.program.parse(["observe", "--duration=5m", "-f"]).usageError)
        #expect(local.message == "'--duration' and '--follow' cannot be used together")
        let global = try #require(PhaseTree.program.parse(["--verbose", "status", "--quiet"]).usageError)
        #expect(global.message == "'--verbose' and '--quiet' cannot be used together")
        #expect(global.commandPath == ["phase", "status"])
    }

    @Test func parsedCommandsCrossConcurrencyDomains() async throws {
        let parsed = try parse(["backfill", "--batch-size", "7"])
        let size = await Task.detached { parsed[PhaseTree.batchSize] }.value
        #expect(size == 7)
    }
}
