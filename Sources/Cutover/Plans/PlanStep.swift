/// One step of a migration plan: the SQL it runs and the checks that must pass first.
///
/// Which members are used depends on ``kind``: expand has ``apply`` and
/// ``revert``; contract has ``apply`` and may have ``revert``, which undoes what a
/// contract stopped before its last file (its point of no return) applied; backfill has
/// ``backfill``; switch has only checks, because the runner performs the switch
/// itself. Members a kind does not use are empty or nil.
public struct PlanStep: Sendable, Hashable {
    /// The four kinds of plan step, in the order a plan lists them.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Adds the v2 representation; its `revert` files undo it.
        case expand
        /// Moves the writer path; the plan adds checks only.
        case `switch`
        /// Converts v1-only rows in batches.
        case backfill
        /// Removes the v1 representation; irreversible once its last file has run.
        case contract

        /// The kind whose SQL and checks `step` uses: each revert uses its step's, and both switches use switch's.
        public init(_ step: PhaseStep) {
            switch step {
            case .expand, .revertExpand: self = .expand
            case .switchModern, .switchLegacy: self = .switch
            case .backfill: self = .backfill
            case .contract, .revertContract: self = .contract
            }
        }

        /// The kind as a manifest spells it.
        public var description: String { rawValue }

        /// The manifest keys a step of this kind may have.
        var allowedKeys: [String] {
            switch self {
            case .expand: ["kind", "apply", "revert", "checks"]
            case .switch: ["kind", "checks"]
            case .backfill: ["kind", "batch", "remaining", "batchSize", "niceRatio", "maxReplicaLag"] + PlanBackfillThrottle.keys + ["checks"]
            case .contract: ["kind", "apply", "revert", "checks"]
            }
        }
    }

    /// Which step this is.
    public let kind: Kind

    /// The files the step runs, in order, each in its own transaction unless marked otherwise.
    public let apply: [PlanSQLFile]

    /// The files that undo expand, in order; for contract, the files that undo what its files
    /// before the last one did (empty when the plan gives none); empty for every other kind.
    public let revert: [PlanSQLFile]

    /// The batch and count files of a backfill step; nil for every other kind.
    public let backfill: PlanBackfill?

    /// The preconditions of the step's forward direction, in order; every one must pass before it runs.
    public let checks: [PlanCheck]

    /// The ``apply`` files that a server of this `server_version_num` (180006 for 18.6) runs, in order.
    public func apply(onServerVersionNumber number: Int) -> [PlanSQLFile] {
        apply.filter { $0.runs(onServerVersionNumber: number) }
    }

    /// The ``revert`` files that a server of this `server_version_num` runs, in order.
    public func revert(onServerVersionNumber number: Int) -> [PlanSQLFile] {
        revert.filter { $0.runs(onServerVersionNumber: number) }
    }

    /// Every SQL file the step names: apply, revert, backfill, then check files, in manifest order.
    public var sqlFilePaths: [String] {
        apply.map(\.path) + revert.map(\.path) + [backfill?.batch.path, backfill?.remaining.path, backfill?.split?.path, backfill?.directBatch?.path].compactMap { $0 }
            + checks.compactMap { check in
                guard case .file(let path) = check.query else { return nil }
                return path
            }
    }
}
