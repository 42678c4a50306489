import CommandLineKit
import CutoverPostgres

/// `phase init`: install or upgrade the control schema and start tracking the plan.
struct InitCommand: PhaseCommand {
    static let spec = CommandSpec("init", abstract: "Install or upgrade the control schema and start tracking the plan.",
                                  parameters: [StandardParameters.dryRun], command: Self.self)

    let context: PhaseContext
    let isDryRun: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        isDryRun = parsed[StandardParameters.dryRun]
    }

    var stopEffect: StopEffect { isDryRun ? .changedNothing : .finishedByRunningAgain }

    func run() async throws -> ExitCode {
        let result: InitResult
        if isDryRun {
            result = try await context.withRunner(options: context.runnerOptions(), isReadOnly: false) { runner in
                let version = try ControlSchema.installedVersion(on: runner.connection)
                let tracked = version == ControlSchema.version ? try MigrationState.load(plan: runner.plan.name, on: runner.connection) : nil
                return InitResult(plan: runner.plan.name, schema: nil, schemaVersionBefore: version, createdState: tracked == nil,
                                  isDryRun: true)
            }
        } else {
            result = try await context.withRunner(options: context.runnerOptions(), isReadOnly: false) { runner in
                let before = try ControlSchema.installedVersion(on: runner.connection)
                let outcome = try runner.initialize()
                return InitResult(plan: runner.plan.name, schema: outcome.schema, schemaVersionBefore: before,
                                  createdState: outcome.createdState, isDryRun: false)
            }
        }
        context.console.printResult(result, format: context.format)
        return .done
    }
}
