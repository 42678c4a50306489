import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase observe`: the modern path's outcome rates against thresholds; `--auto-rollback`
/// switches back once.
struct ObserveCommand: PhaseCommand {
    /// `observe --window`
    static let window = Option(
        "window", type: .duration(in: .seconds(60) ... .seconds(86_400)), default: .seconds(300), valueName: "duration",
        help: "The span of recent outcomes judged (whole minutes, as the outcome log counts them).")
    /// `--max-error-rate`
    static let maxErrorRate = Option(
        "max-error-rate", type: .percentage, default: 0.01, valueName: "percent",
        help: "The modern path's highest acceptable share of failed saves.")
    /// `--max-conflict-ratio`
    static let maxConflictRatio = Option(
        "max-conflict-ratio", type: .ratio, default: 2, valueName: "ratio",
        help: "The modern path's highest acceptable conflict rate, as a multiple of the legacy path's before the switch.")
    /// `--min-saves`
    static let minSaves = Option(
        "min-saves", type: .integer(in: 1...1_000_000), default: 20, valueName: "count",
        help: "Fewer modern saves than this in the window are too few to judge.")
    /// `--auto-rollback`
    static let autoRollback = Flag(
        "auto-rollback", help: "Switch back to legacy, once, when a threshold is crossed and the rollback is still safe.")
    /// `--follow`
    static let follow = Flag("follow", help: "Keep observing until a threshold is crossed or the command is interrupted.")
    /// `--interval`
    static let interval = Option(
        "interval", type: .duration(in: .seconds(1) ... .seconds(3600)), default: .seconds(15), valueName: "duration",
        help: "How often --follow looks again.")
    static let spec = CommandSpec(
        "observe", abstract: "Judge the modern path's outcome rates against rollback thresholds.",
        discussion: "Reads per-path outcome counts from the outcome log. Exits 3 when a threshold is crossed, unless --auto-rollback switched back to legacy.",
        parameters: [Self.window, Self.maxErrorRate, Self.maxConflictRatio, Self.minSaves, Self.autoRollback, Self.follow, Self.interval], command: Self.self)

    let context: PhaseContext
    let thresholds: ObservationThresholds
    let rollsBack: Bool
    let follows: Bool
    let interval: Duration

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        thresholds = ObservationThresholds(window: parsed[Self.window], maximumErrorRate: parsed[Self.maxErrorRate],
                                           maximumConflictRatio: parsed[Self.maxConflictRatio], minimumSaves: parsed[Self.minSaves])
        rollsBack = parsed[Self.autoRollback]
        follows = parsed[Self.follow]
        interval = parsed[Self.interval]
    }

    var stopEffect: StopEffect { rollsBack ? .rollbackBegun : .changedNothing }

    func run() async throws -> ExitCode {
        let thresholds = thresholds
        while true {
            var options = context.runnerOptions()
            // The epoch the outcomes were judged at: an automatic rollback is bound to it, so that
            // it never undoes a change made after the observation.
            let (result, observedEpoch) = try await context.withRunner(options: options, isReadOnly: !rollsBack) {
                runner -> (ObserveResult, Int64) in
                let epoch = try runner.state().epoch
                let report = try RollbackObservation.observe(plan: runner.plan.name, thresholds: thresholds, on: runner.connection)
                return (ObserveResult(report: report, rollback: nil, rollbackRefusal: nil), epoch)
            }
            guard result.report.isCrossed || !follows else {
                context.note("no threshold crossed: modern \(result.report.modern.saves) saves, "
                             + "\(RollbackObservation.percent(result.report.modern.errorRate)) errors; looking again in \(DurationText.format(interval))")
                try await Task.sleep(for: interval)
                continue
            }
            guard result.report.isCrossed, rollsBack else {
                context.console.printResult(result, format: context.format)
                return result.report.isCrossed ? .refused : .done
            }
            options.reason = "automatic rollback: " + result.report.crossed.joined(separator: "; ")
            let rolled = try await context.withRunner(options: options, isReadOnly: false) { runner -> ObserveResult in
                let state = try runner.state()
                guard state.phase == .modern || state.phase == .backfilled else {
                    return ObserveResult(report: result.report, rollback: nil,
                                         rollbackRefusal: "the writer is not modern (phase \(state.phase)); nothing to switch back")
                }
                do {
                    return ObserveResult(report: result.report, rollback: try runner.run(.switchLegacy, expectedEpoch: observedEpoch),
                                         rollbackRefusal: nil)
                } catch let refusal as StepRefusal {
                    return ObserveResult(report: result.report, rollback: nil, rollbackRefusal: refusal.description)
                }
            }
            context.console.printResult(rolled, format: context.format)
            return rolled.rollback == nil ? .refused : .done
        }
    }
}
