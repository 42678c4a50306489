import CutoverTestSupport
import EphemeralPostgres
import Foundation
import Testing

/// The one way the package starts and reaps child processes.
@Suite("Child processes")
struct ChildProcessTests {
    /// A new file path under the temporary folder, removed by the caller.
    private func temporaryFile() -> String {
        TestScratch.url("child-process").path
    }

    @Test func anExitStatusAndAKillingSignalAreReportedAsAShellReportsThem() throws {
        #expect(try ChildProcess.run(["/bin/sh", "-c", "exit 3"], output: nil) == 3)
        #expect(try ChildProcess.run(["/bin/sh", "-c", "kill -TERM $$"], output: nil) == 128 + SIGTERM)
    }

    @Test func theChildGetsItsEnvironmentAndWritesWhereItIsTold() throws {
        let output = temporaryFile()
        let errors = temporaryFile()
        defer { [output, errors].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let pid = try ChildProcess.spawn(["/bin/sh", "-c", "echo \"out $GREETING\"; echo \"err $GREETING\" >&2"],
                                         environment: ["GREETING": "hello"], output: output, errorOutput: errors)
        #expect(try ChildProcess.wait(for: pid) == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "out hello\n")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "err hello\n")
    }

    @Test func aChildInheritsNoDescriptorButItsStandardStreams() throws {
        // A pipe opened without close-on-exec, as a socket of another thread could be.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let output = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: output) }
        #expect(try ChildProcess.run(["/bin/sh", "-c", "ls /proc/$$/fd"], output: output) == 0)
        let open = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(!open.contains(ends[0]) && !open.contains(ends[1]), "the child holds \(open), the pipe is \(ends)")
        #expect(Set(open).isSuperset(of: [0, 1, 2]))
    }

    @Test(.timeLimit(.minutes(3)))
    func aBoundedWaitLeavesARunningChildRunningUntilItIsKilled() throws {
        let pid = try ChildProcess.spawn(["/bin/sleep", "60"], output: nil)
        #expect(try ChildProcess.wait(for: pid, within: .milliseconds(100)) == nil)
        #expect(try ChildProcess.exitStatus(of: pid) == nil)
        kill(pid, SIGKILL)
        #expect(try ChildProcess.wait(for: pid, within: .seconds(30)) == 128 + SIGKILL)
    }

    @Test func aReapedChildSaysWhatCPUTimeItUsed() throws {
        let pid = try ChildProcess.spawn(["/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], output: nil)
        let ended = try ChildProcess.waitForTermination(of: pid)
        #expect(ended.status == 0)
        #expect(ended.cpuTime > .zero)
    }

    @Test func aProgramThatCannotRunIsAnError() {
        #expect(throws: ChildProcessError.self) { try ChildProcess.spawn(["/nonexistent/program"], output: nil) }
    }
}
