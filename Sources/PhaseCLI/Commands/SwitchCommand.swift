import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase switch legacy|modern`: commit the fleet's writer path with a new epoch, and with
/// `--wait-for-fleet` wait until every live instance follows it.
struct SwitchCommand: PhaseCommand {
    /// `switch`'s path.
    static let path = Argument("path", type: .choice(SavePath.self), help: "The writer path later operations take.")
    /// `--force-readers`
    static let forceReaders = Flag(
        "force-readers",
        help: "Switch to modern without reader registry data showing that every live reader reads v2; the history records it.")
    /// `--wait-for-fleet`
    static let waitForFleet = Flag(
        "wait-for-fleet",
        help: "After the switch commits, wait until every live instance registered with the plan reports that it follows the new epoch, with progress on stderr; exits 4 when --fleet-timeout passes first (the switch stays committed).")
    /// `--fleet-timeout`
    static let fleetTimeout = Option(
        "fleet-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(150), valueName: "duration",
        help: "How long --wait-for-fleet waits; the default outlasts the 120s after which a silent instance counts as gone.")
    static let spec = CommandSpec(
        "switch", abstract: "Change the writer path of every application instance.",
        discussion: "Commits the new path and epoch and notifies every listening instance in the same transaction. Operations in flight keep their path. With --wait-for-fleet it then waits until every live registered instance reports following the new epoch; run again after it happened, it changes nothing and waits again.",
        parameters: [Self.path, Self.forceReaders, ReadersCommand.readerTimeout, Self.waitForFleet, Self.fleetTimeout] + StepOptions.parameters,
        command: Self.self)

    let context: PhaseContext
    let target: SavePath
    let forceReaders: Bool
    let readerTimeout: Duration
    let waitsForFleet: Bool
    let fleetTimeout: Duration

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        target = parsed[Self.path]
        forceReaders = parsed[Self.forceReaders]
        readerTimeout = parsed[ReadersCommand.readerTimeout]
        waitsForFleet = parsed[Self.waitForFleet]
        fleetTimeout = parsed[Self.fleetTimeout]
    }

    var step: PhaseStep { target == .legacy ? .switchLegacy : .switchModern }
    var invocation: String { "switch \(target)" }
    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        let options = context.runnerOptions(forceReaders: forceReaders, readerStaleAfter: readerTimeout)
        guard waitsForFleet, !context.steps.isDryRun else { return try await context.runStep(step, options: options) }
        return try await switchAndWaitForFleet(options: options)
    }

    /// Runs the switch, then waits until every live registered instance reports its epoch:
    /// progress on standard error, the result on standard output, and exit 4 with one line saying
    /// what to do when `--fleet-timeout` passes first.
    private func switchAndWaitForFleet(options: PhaseRunner.Options) async throws -> ExitCode {
        let step = step
        let epoch = context.steps.expectedEpoch
        let timeout = fleetTimeout
        let staleAfter = readerTimeout
        let context = context
        let note: @Sendable (String) -> Void = { line in context.note(line) }
        let result = try await context.withRunner(options: options, isReadOnly: false) { runner -> FleetWaitResult in
            let report = try runner.run(step, expectedEpoch: epoch)
            note("\(step.name) \(report.isAlreadyDone ? "was done already" : "committed") at epoch \(report.epoch); "
                 + "waiting up to \(DurationText.format(timeout)) for the fleet to follow it")
            let catchUp = try FleetCatchUp.wait(plan: runner.plan.name, epoch: report.epoch, timeout: timeout, staleAfter: staleAfter,
                                                isStopRequested: { StopSignals.shared.isStopRequested },
                                                on: runner.connection) { note(FleetWaitResult.summary($0)) }
            return FleetWaitResult(step: StepResult(report), catchUp: catchUp)
        }
        context.console.printResult(result, format: context.format)
        guard result.catchUp.isComplete else {
            let behind = result.catchUp.behind
            throw CommandFailure(
                "\(step.name) committed at epoch \(result.catchUp.epoch), but \(behind.count) of "
                    + "\(behind.count + result.catchUp.following.count) live instances did not report following it within "
                    + "\(DurationText.format(timeout)): \(behind.map { DisplayText.unquoted($0.description, limit: 300) }.joined(separator: ", "))",
                details: ["they may still start saves down the old path; look at them ('phase readers'), then run the same command "
                          + "again to wait again (it changes nothing), or 'phase rollback switch'"],
                exitCode: .fleetBehind)
        }
        return .done
    }
}
