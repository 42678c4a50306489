import Cutover
import Foundation
import PostgresClient

extension PhaseRunner {
    /// The standbys now and, before `step`, the warnings their settings call for; nothing is
    /// changed. The primary is read on the check session, each listed standby on a session of
    /// its own, closed before this returns.
    public func standbyOverview(before step: PhaseStep?) throws -> StandbyOverview {
        let survey = try surveyStandbys()
        var warnings: [String] = []
        let work: StandbySettingsAdvice.Work?
        switch step {
        case .backfill?: work = .rowRewrites
        case .expand?, .contract?, .revertExpand?, .revertContract?: work = .exclusiveLocks
        case .switchModern?, .switchLegacy?, nil: work = nil
        }
        // A base backup or a WAL archiver (``StandbyReplication/isStandby``) is listed, not warned of.
        for node in survey.nodes where node.reported?.isStandby != false {
            if let problem = node.problem {
                warnings.append("standby \(node.name) \(problem)")
            } else if let inspection = node.inspection, let work {
                warnings += StandbySettingsAdvice.warnings(for: inspection, before: work).map { "standby \(node.name): \($0)" }
            }
        }
        return StandbyOverview(nodes: survey.nodes, warnings: warnings)
    }

    /// The standbys the primary reports and the operator lists, matched.
    func surveyStandbys() throws -> StandbySurvey {
        try readOnly { try StandbySurvey.take(primary: $0, options: options.standbys) }
    }

    /// Every standby that contract's checks must see was inspected: a standby the primary
    /// reports but nobody listed, a listed one that cannot be reached, or one that is not a
    /// standby of this primary, hides sessions that may still read v1.
    static func standbysInspected(_ survey: StandbySurvey) -> CheckOutcome {
        let blocking = survey.nodes.filter(\.blocksContract)
        let allowed = survey.nodes.filter { !$0.isInspected && $0.isAllowedUninspected }
        let inspected = survey.nodes.filter(\.isInspected).count
        // WAL receivers that replay nothing (an archiver, a base backup) are reported but are no
        // standbys: say so, rather than "0 inspected" beside a sender the operator can see.
        let notStandbys = survey.nodes.filter { $0.reported.map { !$0.isStandby } ?? false }.map(\.name)
        var observed: String
        if !blocking.isEmpty {
            observed = blocking.prefix(5).map { "\($0.name) \($0.problem ?? "")" }.joined(separator: "; ")
        } else if survey.nodes.isEmpty {
            observed = "no standby reported or listed"
        } else {
            observed = survey.nodes.count > notStandbys.count ? "\(inspected) inspected" : "no standby"
            if !notStandbys.isEmpty {
                observed += "; not standbys, as they replay no WAL: " + notStandbys.joined(separator: ", ")
            }
        }
        if !allowed.isEmpty { observed += "; allowed uninspected: " + allowed.map(\.name).joined(separator: ", ") }
        return CheckOutcome(name: "every standby inspected", isPassed: blocking.isEmpty, observed: observed,
                            expected: "every reported or listed standby inspected",
                            message: "list each standby with --standby URL (or \(StandbyOptions.environmentVariable)) so that its sessions are checked, or name one with --allow-uninspected-standby NAME to go on without it")
    }

    /// The sessions on inspected standbys whose application_name matches `pattern`, in the
    /// plan's database: `on standby NAME: pid N (name)`.
    func legacySessions(matching pattern: String, on survey: StandbySurvey) throws -> [String] {
        let database = try connection.query("SELECT current_database() AS db")[0].decode(String.self, "db")
        var found: [String] = []
        try survey.forEachInspected { node, session in
            found += try session.query("""
                SELECT pid, application_name FROM pg_stat_activity
                 WHERE datname = \(database) AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                   AND application_name LIKE \(pattern)
                 ORDER BY pid
                """).map { "on standby \(node.name): pid \(try $0.decode(Int32.self, "pid")) (\(try $0.decode(String.self, "application_name")))" }
        }
        return found
    }
}
