import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase rollback switch|expand|contract`: undo the step named, never more.
struct RollbackCommand: PhaseCommand {
    /// The plan steps a rollback may undo, in the order help lists them.
    static let undoable: KeyValuePairs<String, PlanStep.Kind> = ["switch": .switch, "expand": .expand, "contract": .contract]
    /// `rollback`'s step.
    static let step = Argument(
        "step", type: .choice(undoable),
        help: "What to undo: switch (back to the legacy writer), expand (what expand added, or what a stopped expand left) or contract (what a contract stopped before its last file applied). Named, so that running it again never undoes one step more.")
    static let spec = CommandSpec(
        "rollback", abstract: "Undo the step you name: the switch, expand, or a contract stopped half way.",
        discussion: "Run again after it happened (a lost reply, a second operator), it reports the rollback done and changes nothing. Once contract has run its last file, nothing can be rolled back.",
        parameters: [Self.step] + StepOptions.parameters, command: Self.self)

    let context: PhaseContext
    let undoing: PlanStep.Kind

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        undoing = parsed[Self.step]
    }

    var invocation: String { "rollback \(undoing)" }
    var stopEffect: StopEffect { context.steps.stopEffect }

    func run() async throws -> ExitCode {
        try await context.runStep(try PhaseRunner.rollbackStep(undoing: undoing), options: context.runnerOptions())
    }

    /// The `phase rollback` words that undo `step`: `rollback switch` for `switch legacy`.
    static func words(undoing step: PhaseStep) -> String {
        let target = undoable.first { PhaseMachine.rollbackStep(undoing: $0.value) == step }
        return "rollback \(target?.key ?? step.name)"
    }
}
