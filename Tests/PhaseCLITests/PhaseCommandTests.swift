import CommandLineKit
import Cutover
@testable import PhaseCLI
import Testing

/// The command each `phase` command line makes, before it runs: its typed values and what a
/// stop by a signal would say. No database is needed.
@Suite("phase commands")
struct PhaseCommandTests {
    private func command(_ words: [String]) throws -> any PhaseCommand {
        let parsed = try #require(PhaseCommandTree.program.parse(words).command, "not a command: \(words)")
        let type = try #require(parsed.command as? any PhaseCommand.Type, "\(words) names no PhaseCommand")
        let console = Console(output: CapturedOutput(isTerminal: false), diagnostics: CapturedOutput(isTerminal: false),
                              environment: [:], redactor: TestRedactor.redactor)
        return type.init(parsed, context: PhaseContext(parsed, console: console))
    }

    @Test func stepNamesParseIntoTheCoresTypes() throws {
        #expect(try #require(command(["switch", "legacy"]) as? SwitchCommand).step == .switchLegacy)
        #expect(try #require(command(["switch", "modern"]) as? SwitchCommand).step == .switchModern)
        #expect(try #require(command(["rollback", "expand"]) as? RollbackCommand).undoing == .expand)
        #expect(try #require(command(["check", "switch-legacy"]) as? CheckCommand).target == .step(.switchLegacy))
        #expect(try #require(command(["check", "switch"]) as? CheckCommand).target == .step(.switchModern))
        #expect(try #require(command(["check", "rollback"]) as? CheckCommand).target == .rollback)
        #expect(try #require(command(["check"]) as? CheckCommand).target == nil)
    }

    @Test func backfillIsRefusedAsARollbackTarget() {
        let error = PhaseCommandTree.program.parse(["rollback", "backfill"]).usageError
        #expect(error?.message == "invalid value 'backfill' for '<step>': must be one of switch, expand, contract")
    }

    @Test func defaultsAreTheDeclaredOnesWhereverTheyAreRead() throws {
        let history = try #require(command(["history"]) as? HistoryCommand)
        #expect(history.limit == 50)
        // status takes no step options; it reads their declared defaults.
        let status = try command(["status"])
        #expect(status.context.steps.statementTimeout == .seconds(600))
        #expect(status.context.steps.lockTimeout == .milliseconds(500))
        let expand = try command(["expand", "--lock-timeout", "2s", "--epoch", "7"])
        #expect(expand.context.steps.lockTimeout == .seconds(2))
        #expect(expand.context.steps.expectedEpoch == 7)
        #expect(try #require(command(["readers"]) as? ReadersCommand).readerTimeout == .seconds(120))
    }

    @Test("a stop says where and how to go on", arguments: [
        (["switch", "modern"], "stopped by SIGTERM during switch modern; nothing is half done that 'phase switch modern' cannot finish: run it again, or 'phase status'"),
        (["switch", "legacy", "--dry-run"], "stopped by SIGTERM during switch legacy; it changed nothing: run it again when ready"),
        (["rollback", "contract"], "stopped by SIGTERM during rollback contract; nothing is half done that 'phase rollback contract' cannot finish: run it again, or 'phase status'"),
        (["ledger", "prune"], "stopped by SIGTERM during ledger prune; nothing is half done that 'phase ledger prune' cannot finish: run it again, or 'phase status'"),
        (["init", "--dry-run"], "stopped by SIGTERM during init; it changed nothing: run it again when ready"),
        (["observe", "--auto-rollback"], "stopped by SIGTERM during observe; a rollback it began is finished by 'phase rollback switch': see 'phase status'"),
        (["observe"], "stopped by SIGTERM during observe; it changed nothing: run it again when ready"),
        (["soak"], "stopped by SIGTERM during soak; its throw-away database was removed"),
    ])
    func stopLine(words: [String], line: String) throws {
        let command = try command(words)
        #expect(command.stopEffect.line(command: command.invocation, signal: "SIGTERM") == line)
    }
}
