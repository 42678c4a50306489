import Cutover
import Foundation
import PostgresClient

/// Where a plan stands, for `phase status`.
public struct PhaseStatus: Sendable {
    /// One forward step and how far it got.
    public struct Step: Sendable, Equatable {
        /// The forward step.
        public var step: PhaseStep
        /// How far it got.
        public var state: State

        /// The step's name as the plan and the `phase` command spell it: `expand`, `switch`,
        /// `backfill`, `contract`.
        public var name: String { PlanStep.Kind(step).rawValue }
    }

    /// How far a forward step got.
    public enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Not begun.
        case pending
        /// Its phase has been reached.
        case done
        /// It stopped after applying some of its files; run it again, or its revert.
        case halfDone = "half done"
        /// A runner at work now has begun it.
        case running
        /// A runner began it and stopped before it ended; run it again to finish it.
        case interrupted

        /// The state as `phase status` prints it, identical to the raw value.
        public var description: String { rawValue }
    }

    /// The plan's name.
    public var plan: String
    /// Where the plan was read from.
    public var location: String
    /// The recorded state.
    public var state: MigrationState
    /// The forward steps in order.
    public var steps: [Step]
    /// The next forward step, nil when contracted.
    public var nextStep: PhaseStep?
    /// The next step's checks, run now.
    public var nextChecks: [CheckOutcome]
    /// Rows converted by backfill; those plus the rows still to convert; and the rows the
    /// application's own writes converted since the backfill began.
    public var backfill: (done: Int64, total: Int64, byApplication: Int64)
    /// Why the rows still to convert were not counted (the count, which reads the table, ran
    /// past the check timeout or waited past the lock timeout); nil when ``backfill`` counts them. `total` and
    /// `byApplication` then hold what was converted only.
    public var remainingNotCounted: String?
    /// Attempts left running: by the runner at work now, or interrupted.
    public var unfinished: [PhaseHistoryEntry]
    /// The runner at work now, if any.
    public var lockHolder: RunnerLock.Holder?
    /// A step that stopped half way, and the revert that undoes it.
    public var halfDone: PhaseRunner.HalfDoneStep?
    /// The plan's latest rehearsal on this database, if any.
    public var lastRehearsal: RehearsalRegistry.Record?
    /// What the backfill running now (or stopped before it ended) last reported.
    public var backfillRun: BackfillRunReport?
    /// An operator's pause or retune of the backfill, if any.
    public var backfillControl: BackfillControl?
}

extension PhaseRunner {
    /// Reads the plan's state and runs the next step's checks; changes nothing.
    public func status() throws -> PhaseStatus {
        let state = try state()
        let holder = try readOnly { try RunnerLock.holder(plan: plan.name, on: $0) }
        let unfinished = try PhaseHistory.running(plan: plan.name, on: connection)
        let halfDone = try halfDoneStep(in: state.phase)
        let next = PhaseMachine.nextStep(from: state.phase)
        let checks = try next.map { try self.checks(before: $0, state: state) } ?? []
        var remaining: Int64 = 0
        var notCounted: String?
        if state.phase.hasV2Representation && state.phase != .contracted, let backfill = plan.step(.backfill)?.backfill {
            do {
                remaining = try readOnly { session in
                    try BackfillEngine(plan: plan.name, batchSQL: "", remainingSQL: source.text(backfill.remaining.path))
                        .remaining(on: session)
                }
            } catch let error as PostgresError where error.sqlState == .queryCanceled && !options.isStopRequested() {
                // A large table: the rest of the status is still worth showing.
                notCounted = "not counted within the check timeout of \(DurationText.format(options.checkTimeout, smallestUnit: .seconds)) "
                    + "(the count reads the table; \(Self.longerCheckTimeout))"
            } catch let error as PostgresError where error.sqlState == .lockNotAvailable {
                notCounted = "not counted: the count waited longer than the lock timeout for its lock on the table"
            }
        }
        let steps = PhaseMachine.forwardSteps.map { step -> PhaseStatus.Step in
            if unfinished.contains(where: { $0.step == step.name }) {
                return PhaseStatus.Step(step: step, state: holder == nil ? .interrupted : .running)
            }
            if halfDone?.stopped == step { return PhaseStatus.Step(step: step, state: .halfDone) }
            return PhaseStatus.Step(step: step, state: PhaseMachine.hasHappened(step, by: state.phase) ? .done : .pending)
        }
        var status = PhaseStatus(plan: plan.name, location: source.location, state: state, steps: steps, nextStep: next,
                           nextChecks: checks, backfill: (state.backfillConverted, state.backfillConverted + remaining,
                                                                 state.convertedByApplication(remaining: remaining)),
                           unfinished: unfinished, lockHolder: holder, halfDone: halfDone,
                           lastRehearsal: try RehearsalRegistry.latest(plan: plan.name, on: connection),
                           backfillRun: unfinished.last { $0.step == PhaseStep.backfill.name }.flatMap { BackfillRunReport.from(details: $0.details) },
                           backfillControl: try BackfillControl.read(plan: plan.name, on: connection))
        status.remainingNotCounted = notCounted
        return status
    }
}
