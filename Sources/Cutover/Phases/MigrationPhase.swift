/// Where a table's migration stands, from the untouched legacy schema to the contracted modern one.
///
/// The raw values are stable codes, recorded in the history and printed by the
/// `phase` CLI. The phases follow one another in declaration order:
///
/// ```
/// baseline ─expand─▶ expanded ─switch modern─▶ modern ─backfill─▶ backfilled ─contract─▶ contracted
/// ```
///
/// ``PhaseMachine`` says which ``PhaseStep`` leads from one to another.
public enum MigrationPhase: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Only the legacy (v1) representation exists, and the legacy writer writes it.
    case baseline
    /// The v2 representation exists beside v1 and mirrors every legacy write; the legacy writer still writes.
    case expanded
    /// The modern writer writes; rows written before the switch may still have only v1.
    case modern
    /// The modern writer writes and every row has its v2 representation.
    case backfilled
    /// The v1 representation is gone; only the modern writer and v2 remain. There is no way back.
    case contracted

    /// The phase's code, identical to the raw value.
    public var description: String { rawValue }

    /// The writer path new saves take in this phase: legacy until the switch, modern after it.
    public var writerPath: SavePath {
        switch self {
        case .baseline, .expanded: .legacy
        case .modern, .backfilled, .contracted: .modern
        }
    }

    /// Whether the legacy (v1) representation exists: in every phase before contract.
    public var hasV1Representation: Bool {
        self != .contracted
    }

    /// Whether the modern (v2) representation exists: in every phase after expand.
    public var hasV2Representation: Bool {
        self != .baseline
    }
}
