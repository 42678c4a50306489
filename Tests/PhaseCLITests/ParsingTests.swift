import CommandLineKit
import PhaseCLI
import Testing

@Suite("Parsing")
struct ParsingTests {
    private func parse(_ words: [String], environment: [String: String] = [:]) throws -> ParsedCommand {
        let outcome = SampleTree.program.parse(words, environment: environment)
        return try #require(outcome.command, "not a command: \(outcome)")
    }

    @Test func optionValueFollowsAsTheNextWordOrAfterAnEqualsSign() throws {
        #expect(try parse(["backfill", "--batch-size", "500"])[SampleTree.batchSize] == 500)
        #expect(try parse(["backfill", "--batch-size=500"])[SampleTree.batchSize] == 500)
        #expect(try parse(["backfill", "-b", "250"])[SampleTree.batchSize] == 250)
    }

    @Test func anEqualsSignValueMayItselfContainEqualsSigns() throws {
        let parsed = try parse(["--database-url=host=db user=app", "status"])
        #expect(parsed[SampleTree.databaseURL] == "host=db user=app")
    }

    @Test func absentOptionsTakeTheirDefaultsAndAreNotGiven() throws {
        let parsed = try parse(["backfill"])
        #expect(parsed[SampleTree.batchSize] == 1000)
        #expect(parsed[SampleTree.pause] == .zero)
        #expect(parsed[SampleTree.format] == .text)
        #expect(parsed[SampleTree.databaseURL] == nil)
        #expect(!parsed.isGiven(SampleTree.batchSize))
        #expect(try parse(["backfill", "--batch-size", "1000"]).isGiven(SampleTree.batchSize))
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommandName() throws {
        for words in [["--format", "json", "--plan", "p", "status"], ["status", "--format=json", "--plan", "p"],
                      ["--format", "json", "status", "--plan", "p"]] {
            let parsed = try parse(words)
            #expect(parsed.path == ["status"])
            #expect(parsed[SampleTree.format] == .json)
            #expect(parsed[SampleTree.plan] == "p")
        }
    }

    @Test func globalOptionsWorkAroundNestedSubcommands() throws {
        let parsed = try parse(["ledger", "--quiet", "prune", "--format", "json", "--older-than", "2d"])
        #expect(parsed.path == ["ledger", "prune"])
        #expect(parsed[SampleTree.quiet])
        #expect(parsed[SampleTree.format] == .json)
        #expect(parsed[SampleTree.olderThan] == .seconds(2 * 86_400))
    }

    @Test func flagsAreOffUnlessGiven() throws {
        #expect(try !parse(["switch", "modern"])[SampleTree.dryRun])
        #expect(try parse(["switch", "modern", "--dry-run"])[SampleTree.dryRun])
        #expect(try parse(["-q", "status"])[SampleTree.quiet])
    }

    @Test func positionalArgumentsAreTypedAndOptionalOnesMayBeLeftOut() throws {
        #expect(try parse(["switch", "legacy"])[SampleTree.path] == .legacy)
        #expect(try parse(["switch", "--dry-run", "modern"])[SampleTree.path] == .modern)
        #expect(try parse(["check", "expand"])[SampleTree.step] == "expand")
        let bare = try parse(["check"])
        #expect(bare[SampleTree.step] == nil)
        #expect(!bare.isGiven(SampleTree.step))
    }

    @Test func doubleDashEndsOptionsSoDashedWordsBecomeArguments() throws {
        let parsed = try parse(["check", "--only", "a", "--", "--odd-step-name"])
        #expect(parsed[SampleTree.step] == "--odd-step-name")
        #expect(parsed.values(of: SampleTree.only) == ["a"])
        let usage = try #require(SampleTree.program.parse(["check", "--", "a", "--dry-run"]).usageError)
        #expect(usage.message == "unexpected argument '--dry-run'")
    }

    @Test func repeatableOptionsKeepEveryValueInOrder() throws {
        let parsed = try parse(["check", "--only", "b", "--only=a", "--only", "c"])
        #expect(parsed.values(of: SampleTree.only) == ["b", "a", "c"])
        #expect(parsed[SampleTree.only] == "c")
        #expect(try parse(["check"]).values(of: SampleTree.only).isEmpty)
        #expect(try parse(["backfill"])[SampleTree.batchSize] == 1000)
    }

    @Test func subcommandsNestAndTheirPathIsReported() throws {
        #expect(try parse(["ledger", "prune"]).path == ["ledger", "prune"])
        #expect(try parse(["demo"]).path == ["demo"])
    }

    @Test func anEnvironmentVariableStandsInForAnAbsentOption() throws {
        let environment = ["DATABASE_URL": "postgresql://db/app"]
        let fromEnvironment = try parse(["status"], environment: environment)
        #expect(fromEnvironment[SampleTree.databaseURL] == "postgresql://db/app")
        #expect(fromEnvironment.isGiven(SampleTree.databaseURL))
        let fromCommandLine = try parse(["status", "--database-url", "postgresql://other/app"], environment: environment)
        #expect(fromCommandLine[SampleTree.databaseURL] == "postgresql://other/app")
        #expect(try parse(["status"], environment: ["DATABASE_URL": ""])[SampleTree.databaseURL] == nil)
    }

    @Test func negativeNumbersAreValuesNotOptions() throws {
        let error = try #require(SampleTree.program.parse(["history", "--limit", "-3"]).usageError)
        #expect(error.message == "invalid value '-3' for '--limit': must be at least 1")
    }

    @Test func mutuallyExclusiveFlagsAndOptionsAreRefusedTogether() throws {
        #expect(try parse(["observe", "--follow"])[SampleTree.follow])
        #expect(try parse(["observe", "--duration", "5m"])[SampleTree.duration] == .seconds(300))
        let local = try #require(SampleTree.program.parse(["observe", "--duration=5m", "-f"]).usageError)
        #expect(local.message == "'--duration' and '--follow' cannot be used together")
        let global = try #require(SampleTree.program.parse(["--verbose", "status", "--quiet"]).usageError)
        #expect(global.message == "'--verbose' and '--quiet' cannot be used together")
        #expect(global.commandPath == ["phase", "status"])
    }

    @Test func parsedCommandsCrossConcurrencyDomains() async throws {
        let parsed = try parse(["backfill", "--batch-size", "7"])
        let size = await Task.detached { parsed[SampleTree.batchSize] }.value
        #expect(size == 7)
    }
}
