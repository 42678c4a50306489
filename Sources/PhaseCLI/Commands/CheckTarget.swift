import CommandLineKit
import Cutover

/// The step whose checks `phase check` runs, as the operator names it.
enum CheckTarget: Sendable, Equatable {
    /// A step named outright.
    case step(PhaseStep)
    /// The rollback the current phase allows, whichever it is.
    case rollback

    /// The words `phase check` takes, each for its target.
    static let valueType = ValueType<CheckTarget>.choice([
        "expand": .step(.expand), "switch": .step(.switchModern), "switch-legacy": .step(.switchLegacy),
        "backfill": .step(.backfill), "contract": .step(.contract), "rollback": .rollback,
    ])
}
