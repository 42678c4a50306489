import Cutover
import PostgresClient

extension PhaseRunner {
    /// The name of the check that the plan is the one that was applied.
    static let appliedPlanCheckName = "applied SQL unchanged"
    /// What that check observes of a plan as it was applied.
    static let unchangedPlan = "unchanged"

    /// The plan's pins as this version makes them.
    var pins: PlanPins { PlanPins(plan: plan, files: source.files, compiled: source.compiled) }

    /// The pinned parts as one JSON object of texts, for the server to checksum in one statement.
    private static func json(_ pins: PlanPins) -> String {
        let parts = pins.parts.sorted { $0.key < $1.key }
        return "{" + parts.map { JSONStringEscaper.quoted($0.key) + ":" + JSONStringEscaper.quoted($0.value) }
            .joined(separator: ",") + "}"
    }

    /// Records the checksum of every part of the plan the first time a step of it completes,
    /// in that step's transaction, and forgets them when the plan goes back to baseline, so
    /// that a plan may change only before it begins and after it was wholly undone.
    ///
    /// A step that went on with compiled parts other than those pinned (``PlanPinComparison/recompiled(parts:isAcceptedByOperator:)``)
    /// records them as this version compiles them, and pins the declaration and the compiler
    /// compatibility when the plan began before they were pinned: the next step compares
    /// against what this version compiles.
    func recordPins(reaching target: MigrationPhase, on connection: PostgresConnection) throws {
        if target == .baseline {
            try connection.query("DELETE FROM cutover.applied_files WHERE plan = \(plan.name) AND step = \(Self.pinStep)")
            return
        }
        let json = Self.json(pins)
        guard case .recompiled = try pinComparison(on: connection) else {
            try connection.query("""
                INSERT INTO cutover.applied_files (plan, step, file, checksum)
                SELECT \(plan.name), \(Self.pinStep), key, encode(sha256(convert_to(value, 'UTF8')), 'hex')
                  FROM jsonb_each_text(\(json)::jsonb)
                ON CONFLICT (plan, step, file) DO NOTHING
                """)
            return
        }
        try connection.query("""
            DELETE FROM cutover.applied_files
             WHERE plan = \(plan.name) AND step = \(Self.pinStep) AND NOT (\(json)::jsonb ? file)
            """)
        try connection.query("""
            INSERT INTO cutover.applied_files (plan, step, file, checksum)
            SELECT \(plan.name), \(Self.pinStep), key, encode(sha256(convert_to(value, 'UTF8')), 'hex')
              FROM jsonb_each_text(\(json)::jsonb)
            ON CONFLICT (plan, step, file) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
             WHERE applied_files.checksum <> EXCLUDED.checksum
            """)
    }

    /// How the comparison names a change of the plan's table (``PlanPins``' part `plan.json: table`).
    static let tableChangePrefix = "plan.json: table changed"

    /// The `step` under which the whole plan's parts are recorded, apart from the files each step applied.
    static let pinStep = "plan"

    /// The plan as it is now against its pins and the files each step applied, as recorded
    /// in `connection`'s view of the database.
    func pinComparison(on connection: PostgresConnection) throws -> PlanPinComparison {
        let pins = pins
        var current: [String: String] = [:]
        for row in try connection.query("""
            SELECT key, encode(sha256(convert_to(value, 'UTF8')), 'hex') AS checksum FROM jsonb_each_text(\(Self.json(pins))::jsonb)
            """) {
            current[try row.decode(String.self, "key")] = try row.decode(String.self, "checksum")
        }
        var recorded: [PlanPinComparison.Record] = []
        for row in try connection.query("""
            SELECT step, file, checksum FROM cutover.applied_files WHERE plan = \(plan.name) ORDER BY step = \(Self.pinStep), applied_at, file
            """) {
            let step = try row.decode(String.self, "step")
            recorded.append(.init(step: step == Self.pinStep ? nil : step, part: try row.decode(String.self, "file"),
                                  checksum: try row.decode(String.self, "checksum")))
        }
        return PlanPinComparison(pins: pins, current: current, recorded: recorded, acceptsRecompiled: options.acceptsRecompiledPlan)
    }

    /// Every file applied so far, and every part of the plan as it was when its first step
    /// completed, is unchanged, or differs only as this version compiles the same declaration:
    /// a changed file, check, step or setting is named.
    func appliedPlanUnchanged() throws -> CheckOutcome {
        Self.appliedPlanOutcome(try pinComparison(on: connection))
    }

    /// The check "applied SQL unchanged" that `comparison` comes to.
    static func appliedPlanOutcome(_ comparison: PlanPinComparison) -> CheckOutcome {
        let restore = "restore the plan as it was applied; a plan changes only before expand or after "
            + "'phase rollback expand', else fix forward with a new plan"
        let observed: String
        var message = restore
        switch comparison {
        case .unchanged:
            observed = unchangedPlan
        case .recompiled(let parts, let isAcceptedByOperator):
            let noun = parts.contains { $0.hasPrefix("plan.json: ") } ? "part" : "file"
            let count = parts.count == 1 ? "1 compiled \(noun) differs" : "\(parts.count) compiled \(noun)s differ"
            let list = parts.joined(separator: ", ")
            observed = isAcceptedByOperator
                ? "no declaration pinned when the plan began; \(count) from what Cutover compiled then, "
                    + "accepted with --accept-recompiled-plan (compiled again by this version): \(list)"
                : "unchanged declaration; \(count) from what Cutover compiled when the plan began "
                    + "(compiled again from the same declaration by this version): \(list)"
        case .changed(let changes):
            if let table = changes.first(where: { $0.hasPrefix(tableChangePrefix) }) {
                // Another table under the same name, most likely: the rest follows from it.
                let others = changes.count - 1
                observed = table + (others == 0 ? "" : "; and \(others) other part\(others == 1 ? "" : "s") of the plan")
                message = "the migration of this plan's name began on another table: if this plan.json is another table's "
                    + "plan, give it a name of its own (\"name\"); else " + restore
            } else {
                observed = changes.joined(separator: "; ")
            }
        case .compatibilityChanged(let then, let now, let changes):
            observed = (["compiler compatibility \(then) when the plan began, \(now) in this Cutover"] + changes)
                .joined(separator: "; ")
            message = "this Cutover compiles at compiler compatibility \(now), whose SQL cannot carry on a migration begun by "
                + "SQL compiled at \(then): finish the migration with the Cutover version that began it, or roll it back to "
                + "baseline with that version"
        case .recompiledUnpinned(let changes):
            observed = changes.joined(separator: "; ")
            message = "the compiled SQL differs from what Cutover compiled when the plan began, likely because Cutover "
                + "was upgraded since: finish the migration with the version that began it, or, if plan.json is "
                + "unchanged, run the step again with --accept-recompiled-plan (the history records it)"
        }
        return CheckOutcome(name: appliedPlanCheckName, isPassed: comparison.isPassed, observed: observed,
                            expected: unchangedPlan, message: message)
    }

    /// Every expression, type and name of a declarative plan compiles on this server: the
    /// probe runs in a transaction that is rolled back, each statement under a savepoint so
    /// that every mistake is named, against a temporary copy of the table, which is only read.
    func expressionsCompile(_ probe: [ProbeStatement]) throws -> CheckOutcome {
        let name = "the plan's expressions compile"
        var failures: [String] = []
        do {
            try rolledBack(isReadOnly: false) { session in
                for (index, statement) in probe.enumerated() {
                    try session.execute(unsafeSQL: "SAVEPOINT cutover_probe_\(index)")
                    do {
                        try session.execute(unsafeSQL: statement.sql)
                    } catch let error as PostgresError where !error.isConnectionBroken && error.sqlState != .queryCanceled {
                        failures.append("\(statement.subject): \(error.message)")
                        // Without the copy of the table nothing after it can compile.
                        if index == 0 { break }
                        try session.execute(unsafeSQL: "ROLLBACK TO SAVEPOINT cutover_probe_\(index)")
                    }
                }
            }
        } catch let error as PostgresError {
            if options.isStopRequested() { throw error }
            return CheckOutcome(name: name, isPassed: false, observed: "error: \(error.description)",
                                expected: "every one compiles", message: "the probe could not run; see the error")
        }
        return CheckOutcome(name: name, isPassed: failures.isEmpty,
                            observed: failures.isEmpty ? "all \(probe.count) statements compile" : failures.joined(separator: "; "),
                            expected: "every one compiles",
                            message: "fix the plan's expressions, types or names; nothing was changed")
    }
}
