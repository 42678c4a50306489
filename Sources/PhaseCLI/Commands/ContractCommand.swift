import CommandLineKit
import CutoverPostgres
import Foundation

/// `phase contract`: remove the legacy representation; irreversible, so it needs `--yes`.
struct ContractCommand: PhaseCommand {
    /// `--window`
    static let window = Option("window", type: .duration(in: .zero ... .seconds(365 * 86_400)), valueName: "duration",
                               help: "How long the modern writer must have written alone; the plan's window when omitted.")
    /// `--yes`
    static let yes = Flag("yes", help: "Confirm that contract cannot be undone.")
    static let spec = CommandSpec(
        "contract", abstract: "Remove the legacy representation. This cannot be undone.",
        discussion: "Refused unless every check passes: backfill complete, the modern writer alone for the window, no legacy session connected to the primary or an inspected standby, every standby the primary reports inspected, no live reader of the plan that reads only v1, no legacy write within the window, and a passing 'phase rehearse' of this very plan on this database (--skip-rehearsal overrides, and the history records it).",
        parameters: [Self.window, Self.yes, ReadersCommand.readerTimeout] + StandbyParameters.parameters + StepOptions.parameters + [StepOptions.skipRehearsal],
        command: Self.self)

    let context: PhaseContext
    let window: Duration?
    let isConfirmed: Bool
    let readerTimeout: Duration
    let gate: RehearsalGate

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        gate = StepOptions.rehearsalGate(parsed, environment: ProcessInfo.processInfo.environment)
        self.context = context
        window = parsed[Self.window]
        isConfirmed = parsed[Self.yes]
        readerTimeout = parsed[ReadersCommand.readerTimeout]
    }

    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        guard context.steps.isDryRun || isConfirmed else {
            throw CommandFailure("contract removes the legacy representation and cannot be undone; pass --yes to confirm",
                                 details: ["run 'phase check contract' first, or 'phase contract --dry-run' to see what would run"],
                                 exitCode: .usage)
        }
        var options = context.runnerOptions(modernWriterWindow: window, readerStaleAfter: readerTimeout)
        options.rehearsalGate = gate
        return try await context.runStep(.contract, options: options)
    }
}
