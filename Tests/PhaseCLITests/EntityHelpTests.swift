import CommandLineKit
import PhaseCLI
import Testing

/// Outside the drafts plan, `phase` speaks of records and of the plan's own table.
@Suite("Help for any plan")
struct EntityHelpTests {
    @Test("phase --help and every command's help say nothing of drafts, for the orders plan",
          arguments: PhaseCommandTree.root.commandPaths)
    func helpSaysNothingOfDrafts(path: [String]) async throws {
        let plan = ExampleWorkload.ordersStatusCode.path
        let run = await ProgramRun.of(["--plan", plan] + path + ["--help"], program: PhaseCommandTree.program)
        #expect(run.exitCode == .done)
        #expect(!run.output.isEmpty)
        #expect(!run.output.lowercased().contains("draft"), "phase \(path.joined(separator: " ")) --help:\n\(run.output)")
    }
}
