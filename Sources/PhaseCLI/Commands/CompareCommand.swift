import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase compare`: read a sample of the plan's rows through both representations and report,
/// by key and column, where they disagree.
struct CompareCommand: PhaseCommand {
    /// `--sample`
    static let sample = Option("sample", type: .integer(in: 1...1_000_000), default: 1000, valueName: "count",
                               help: "How many rows to read, chosen at random, and compare.")
    /// `--all`
    static let all = Flag("all", help: "Read and compare every row instead of a sample.")
    /// `--show-values`
    static let showValues = Flag("show-values", help: "Print the values that differ; hidden by default, and not even read.")
    /// `--hide-keys`
    static let hideKeys = Flag("hide-keys", help: "Print each row's key hashed instead of its values: keys may be personal data too.")
    static let spec = CommandSpec(
        "compare", abstract: "Read a sample of the plan's rows through both representations and report where they disagree; changes nothing.",
        discussion: """
            For each alter_column of the plan, every modern column is compared with what its up expression makes of the \
            legacy columns, and every legacy column with what down makes of the modern ones, through the functions the \
            sync trigger calls. Disagreements are listed by key and column (up to 1000 rows; all are counted). Values are \
            hidden unless --show-values; keys are shown, and --hide-keys prints instead the first 16 hex digits of the \
            SHA-256 of the key as a JSON array (left(encode(sha256(convert_to(jsonb_build_array(key columns)::text, \
            'UTF8')), 'hex'), 16) finds the row). Rows whose modern columns are not filled yet are counted as not \
            converted yet, not as disagreements. Works from expand until contract. Exits 0 when every row read agrees, \
            3 when one disagrees, and 3 with one line saying why when the plan cannot be compared in its phase (before \
            expand, after contract) or has no alter_column.
            """,
        parameters: [Self.sample, Self.all, Self.showValues, Self.hideKeys], command: Self.self)

    let context: PhaseContext
    let sample: Int
    let isSampleGiven: Bool
    let readsAll: Bool
    let showsValues: Bool
    let hidesKeys: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        sample = parsed[Self.sample]
        isSampleGiven = parsed.isGiven(Self.sample)
        readsAll = parsed[Self.all]
        showsValues = parsed[Self.showValues]
        hidesKeys = parsed[Self.hideKeys]
    }

    func run() async throws -> ExitCode {
        if readsAll && isSampleGiven {
            throw CommandFailure("--all and --sample exclude each other: --all reads every row", exitCode: .usage)
        }
        let options = RepresentationCompare.Options(sample: readsAll ? nil : sample, showsValues: showsValues, hidesKeys: hidesKeys)
        let report = try await context.withReadingRunner { runner in
            let comparison = try Self.comparison(of: runner.source)
            let phase = try runner.state().phase
            guard phase != .baseline && phase != .contracted else {
                let why = phase == .baseline ? "the modern columns do not exist before expand" : "the legacy columns are gone after contract"
                throw CommandFailure("cannot compare plan \(runner.plan.name) in phase \(phase): \(why)", exitCode: .refused)
            }
            return try RepresentationCompare.compare(comparison, options: options, on: runner.connection)
        }
        context.console.printResult(CompareResult(report: report), format: context.format)
        return report.isAgreeing ? .done : .refused
    }

    /// What compare reads for the plan, or why it cannot compare it.
    private static func comparison(of source: PlanSource) throws -> RepresentationComparison {
        guard let compiled = source.compiled else {
            throw CommandFailure("cannot compare plan \(source.plan.name): it is written as SQL files, and compare reads "
                                 + "a declarative plan's alter_column up and down expressions", exitCode: .refused)
        }
        guard let comparison = compiled.representationComparison else {
            throw CommandFailure("cannot compare plan \(source.plan.name): it keeps no column in two representations "
                                 + "(it has no alter_column)", exitCode: .refused)
        }
        return comparison
    }
}
