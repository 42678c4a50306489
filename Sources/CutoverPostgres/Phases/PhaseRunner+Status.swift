import Cutover
import Foundation
import PostgresClient

/// Where a plan stands, for `phase status`.
public struct PhaseStatus: Sendable {
    /// One forward step and how far it got.
    public struct Step: Sendable, Equatable {
        /// The step's name.
        public var name: String
        /// pending, done, running or interrupted.
        public var state: String
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
    /// Rows converted by backfill, and converted plus remaining.
    public var backfill: (done: Int64, total: Int64)
    /// Attempts left running: by the runner at work now, or interrupted.
    public var unfinished: [PhaseHistoryEntry]
    /// The runner at work now, if any.
    public var lockHolder: RunnerLock.Holder?
}

extension PhaseRunner {
    /// Reads the plan's state and runs the next step's checks; changes nothing.
    public func status() throws -> PhaseStatus {
        let state = try state()
        let holder = try RunnerLock.holder(on: connection)
        let unfinished = try PhaseHistory.running(plan: plan.name, on: connection)
        let next = PhaseMachine.nextStep(from: state.phase)
        let checks = try next.map { try self.checks(before: $0, state: state) } ?? []
        var remaining: Int64 = 0
        if state.phase.hasV2Representation && state.phase != .contracted, let backfill = plan.step(.backfill)?.backfill {
            remaining = (try? BackfillEngine(plan: plan.name, batchSQL: "", remainingSQL: source.text(backfill.remaining.path))
                .remaining(on: connection)) ?? 0
        }
        let order: [(PhaseStep, MigrationPhase)] = [(.expand, .expanded), (.switchModern, .modern),
                                                    (.backfill, .backfilled), (.contract, .contracted)]
        let rank = MigrationPhase.allCases
        let steps = order.map { step, reached in
            let done = rank.firstIndex(of: state.phase)! >= rank.firstIndex(of: reached)!
            var name = step.name
            if step == .switchModern { name = "switch" }
            if unfinished.contains(where: { $0.step == step.name }) {
                return PhaseStatus.Step(name: name, state: holder == nil ? "interrupted" : "running")
            }
            return PhaseStatus.Step(name: name, state: done ? "done" : "pending")
        }
        return PhaseStatus(plan: plan.name, location: source.location, state: state, steps: steps, nextStep: next,
                           nextChecks: checks, backfill: (state.backfillConverted, state.backfillConverted + remaining),
                           unfinished: unfinished, lockHolder: holder)
    }
}
