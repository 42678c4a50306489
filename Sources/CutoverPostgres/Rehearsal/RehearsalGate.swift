import Foundation
import PostgresClient

/// Whether a step that changes the table (expand, contract) needs a passing rehearsal first.
///
/// `phase expand` and `phase contract` require one: `phase rehearse` of the same plan, with
/// the same checksum (its manifest and every file it names), passed on this database. The
/// operator may skip it (`--skip-rehearsal`, or `CUTOVER_SKIP_REHEARSAL=1`); the check then
/// passes saying so, and the history keeps it with the step's checks.
public enum RehearsalGate: Sendable, Equatable {
    /// No rehearsal is asked for (the library's default, and the rehearsal's own runner).
    case notRequired
    /// A passing rehearsal of the plan's checksum must be recorded.
    case required
    /// Required, but the operator skipped it; `how` names the switch (`--skip-rehearsal`).
    case skipped(how: String)
}

extension PhaseRunner {
    /// The check "rehearsal passed", or nil when the gate asks for none.
    func rehearsalCheck() throws -> CheckOutcome? {
        let name = "rehearsal passed"
        let message = "run 'phase rehearse' first, or pass --skip-rehearsal (the history records it)"
        switch options.rehearsalGate {
        case .notRequired:
            return nil
        case .skipped(let how):
            return CheckOutcome(name: name, isPassed: true, observed: "skipped by the operator (\(how))",
                                expected: "a passing rehearsal of this plan on this database", message: message)
        case .required:
            let checksum = try Rehearsal.checksum(of: source, on: connection)
            let expected = "a passing rehearsal of this plan (checksum \(checksum.prefix(12))) on this database"
            if let passed = try RehearsalRegistry.latestPassed(plan: plan.name, checksum: checksum, on: connection) {
                return CheckOutcome(name: name, isPassed: true,
                                    observed: "rehearsal \(passed.id) passed, started \(passed.startedAt) by \(passed.osUser) as \(passed.databaseRole)",
                                    expected: expected, message: message)
            }
            let observed: String
            if let last = try RehearsalRegistry.latest(plan: plan.name, on: connection) {
                let verdict = last.verdict ?? "still running"
                observed = last.checksum == checksum
                    ? "none passed; the last, rehearsal \(last.id) started \(last.startedAt), \(verdict)"
                    : "none of this checksum; the last, rehearsal \(last.id) started \(last.startedAt) (\(verdict)), rehearsed checksum \(last.checksum.prefix(12)): the plan changed since"
            } else {
                observed = "none: the plan was never rehearsed on this database"
            }
            return CheckOutcome(name: name, isPassed: false, observed: observed, expected: expected, message: message)
        }
    }
}

extension PhaseHistoryEntry {
    /// What the step's rehearsal check saw when it ran (`rehearsal 4 passed, …`, or `skipped by the
    /// operator (--skip-rehearsal)`), from the checks its history row keeps; nil for a step the
    /// gate does not apply to.
    public var rehearsal: String? {
        struct Details: Decodable {
            struct Check: Decodable {
                let name: String
                let observed: String
            }
            let checks: [Check]?
        }
        let details = try? JSONDecoder().decode(Details.self, from: Data(self.details.utf8))
        return details?.checks?.first { $0.name == "rehearsal passed" }?.observed
    }
}
