import Cutover
import PostgresClient

extension PhaseRunner {
    /// The name of the check that the plan is the one that was applied.
    static let appliedPlanCheckName = "applied SQL unchanged"

    /// The plan's pinned parts as one JSON object of texts, for the server to checksum in one
    /// statement.
    private var pinsJSON: String {
        let parts = PlanPins(plan: plan, files: source.files).parts.sorted { $0.key < $1.key }
        return "{" + parts.map { JSONStringEscaper.quoted($0.key) + ":" + JSONStringEscaper.quoted($0.value) }
            .joined(separator: ",") + "}"
    }

    /// Records the checksum of every part of the plan the first time a step of it completes,
    /// in that step's transaction, and forgets them when the plan goes back to baseline, so
    /// that a plan may change only before it begins and after it was wholly undone.
    func recordPins(reaching target: MigrationPhase, on connection: PostgresConnection) throws {
        if target == .baseline {
            try connection.query("DELETE FROM cutover.applied_files WHERE plan = \(plan.name) AND step = \(Self.pinStep)")
            return
        }
        try connection.query("""
            INSERT INTO cutover.applied_files (plan, step, file, checksum)
            SELECT \(plan.name), \(Self.pinStep), key, encode(sha256(convert_to(value, 'UTF8')), 'hex')
              FROM jsonb_each_text(\(pinsJSON)::jsonb)
            ON CONFLICT (plan, step, file) DO NOTHING
            """)
    }

    /// The `step` under which the whole plan's parts are recorded, apart from the files each step applied.
    static let pinStep = "plan"

    /// Every file applied so far, and every part of the plan as it was when its first step
    /// completed, is unchanged: a changed file, check, step or setting is named.
    func appliedPlanUnchanged() throws -> CheckOutcome {
        var current: [String: String] = [:]
        for row in try connection.query("""
            SELECT key, encode(sha256(convert_to(value, 'UTF8')), 'hex') AS checksum FROM jsonb_each_text(\(pinsJSON)::jsonb)
            """) {
            current[try row.decode(String.self, "key")] = try row.decode(String.self, "checksum")
        }
        var changed: [String] = []
        var reported: Set<String> = []
        var pinned: Set<String> = []
        for row in try connection.query("""
            SELECT step, file, checksum FROM cutover.applied_files WHERE plan = \(plan.name) ORDER BY step = \(Self.pinStep), applied_at, file
            """) {
            let step = try row.decode(String.self, "step")
            let part = try row.decode(String.self, "file")
            let recorded = try row.decode(String.self, "checksum")
            let isPin = step == Self.pinStep
            if isPin { pinned.insert(part) }
            let now = current[part]
            guard now != recorded, reported.insert(part).inserted else { continue }
            let subject = isPin ? part : "\(step) step's \(part)"
            guard let now else {
                changed.append("\(subject) is no longer in the plan")
                continue
            }
            changed.append(isPin
                ? "\(subject) changed since the plan began (then \(recorded.prefix(12)), now \(now.prefix(12)))"
                : "\(subject) changed since it was applied (applied \(recorded.prefix(12)), now \(now.prefix(12)))")
        }
        if !pinned.isEmpty {
            for part in current.keys.sorted() where !pinned.contains(part) {
                changed.append("\(part) was added since the plan began")
            }
        }
        return CheckOutcome(name: Self.appliedPlanCheckName, isPassed: changed.isEmpty,
                            observed: changed.isEmpty ? "unchanged" : changed.joined(separator: "; "), expected: "unchanged",
                            message: "restore the plan as it was applied; a plan changes only before expand or after "
                                + "'phase rollback expand', else fix forward with a new plan")
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
