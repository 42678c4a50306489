import CommandLineKit
import PhaseCLI
import Testing

@Suite("Running a program")
struct ProgramTests {
    private struct Unexpected: Error, CustomStringConvertible {
        var description: String { "server closed the connection to postgresql://app:\(TestRedactor.password)@db/app" }
    }

    @Test func exitCodesHaveExactlyTheContractsNumbers() {
        #expect(ExitCode.allCases.map(\.rawValue) == [0, 1, 3, 4, 64, 69, 75, 77, 129, 130, 143])
        #expect(ExitCode.done.rawValue == 0)
        #expect(ExitCode.error.rawValue == 1)
        #expect(ExitCode.refused.rawValue == 3)
        #expect(ExitCode.usage.rawValue == 64)
        #expect(ExitCode.databaseUnreachable.rawValue == 69)
        #expect(ExitCode.lockHeld.rawValue == 75)
        #expect(ExitCode.accessDenied.rawValue == 77)
        #expect(ExitCode.stoppedByHangUp.rawValue == 128 + 1)
        #expect(ExitCode.stoppedByInterrupt.rawValue == 128 + 2)
        #expect(ExitCode.stoppedByTermination.rawValue == 128 + 15)
    }

    @Test func theCommandRunsWithItsParsedValuesAndItsExitCodeIsKept() async {
        let run = await ProgramRun.of(["backfill", "--batch-size", "42"]) { parsed in
            #expect(parsed.path == ["backfill"])
            #expect(parsed[SampleTree.batchSize] == 42)
            return .refused
        }
        #expect(run.exitCode == .refused)
        #expect(run.output == "")
        #expect(run.diagnostics == "")
    }

    @Test func aCommandFailureIsPrintedWithItsExitCode() async {
        let run = await ProgramRun.of(["expand"]) { _ in
            throw CommandFailure("another runner holds the lock", details: ["Try again when it has finished."],
                                 exitCode: .lockHeld)
        }
        #expect(run.exitCode == .lockHeld)
        #expect(run.diagnostics == "Error: another runner holds the lock\nTry again when it has finished.\n")
    }

    @Test func anyOtherErrorIsARedactedErrorWithExitCodeOne() async {
        let run = await ProgramRun.of(["status"]) { _ in throw Unexpected() }
        #expect(run.exitCode == .error)
        #expect(run.diagnostics == "Error: server closed the connection to postgresql://app:[redacted]@db/app\n")
    }

    @Test func theEnvironmentOfTheConsoleFeedsTheParser() async {
        let run = await ProgramRun.of(["status"], environment: ["DATABASE_URL": "postgresql://db/app"]) { parsed in
            parsed[SampleTree.databaseURL] == "postgresql://db/app" ? .done : .error
        }
        #expect(run.exitCode == .done)
    }

    @Test func helpAndUsageErrorsNeverRunTheCommand() async {
        for (words, expected) in [(["status", "--help"], ExitCode.done), (["status", "--bogus"], .usage)] {
            let run = await ProgramRun.of(words) { _ in
                Issue.record("ran for \(words)")
                return .error
            }
            #expect(run.exitCode == expected, "\(words)")
        }
    }
}
