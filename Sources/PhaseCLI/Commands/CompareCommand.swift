import CommandLineKit
import CutoverPostgres

/// `phase compare`: read a sample of drafts through both readers and report disagreements.
struct CompareCommand: PhaseCommand {
    /// `--sample`
    static let sample = Option("sample", type: .integer(in: 1...1_000_000), default: 1000, valueName: "count",
                               help: "How many drafts to read and compare.")
    /// `--show-values`
    static let showValues = Flag("show-values", help: "Print the values that differ; hidden by default.")
    static let spec = CommandSpec("compare", abstract: "Read a sample of drafts through both readers and report where they disagree; changes nothing.",
                                  parameters: [Self.sample, Self.showValues], command: Self.self)

    let context: PhaseContext
    let sample: Int
    let showsValues: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        sample = parsed[Self.sample]
        showsValues = parsed[Self.showValues]
    }

    func run() async throws -> ExitCode {
        let sample = sample
        let comparison = try await context.withReadingRunner { runner in
            try ShadowCompare.compare(sample: sample, on: runner.connection)
        }
        let shown = CompareResult(comparison: comparison, showValues: showsValues)
        context.console.printResult(shown, format: context.format)
        return shown.comparison.mismatches.isEmpty ? .done : .refused
    }
}
