import CutoverPostgres
import Foundation
import PostgresClient

/// The `squat` neighbour: a role with exactly the application's grants
/// (`sql/roles/grant_application.sql`) that tries, at random moments, everything that would
/// disarm the migration's safety nets: it holds the advisory lock that runners once used, and
/// tries to take, release or forge the runner's lease, the writer path, the history, the
/// outcome counts, the ledger and other instances' registrations. Every attempt must be refused;
/// one that goes through is counted as `squatter write went through`, which the soak's verdict
/// counts as a violation. The migration's own steps must go on beside it.
enum SquattingApplication {
    /// What it tries, each of which the server must refuse.
    static let attempts: [String] = [
        "INSERT INTO cutover.runner_lease (plan, pid, backend_start, database_role, os_user, application_name) "
            + "SELECT 'drafts', pg_backend_pid(), now(), current_user, 'squatter', 'squatter'",
        "DELETE FROM cutover.runner_lease",
        "UPDATE cutover.migration_state SET writer_path = 'legacy', epoch = 9223372036854775807",
        "SELECT * FROM cutover.migration_state FOR UPDATE",
        "LOCK TABLE cutover.migration_state IN ACCESS EXCLUSIVE MODE",
        "INSERT INTO cutover.phase_history (plan, step, direction, database_role, os_user, outcome) "
            + "VALUES ('drafts', 'contract', 'forward', 'x', 'x', 'done')",
        "INSERT INTO cutover.outcome_log (minute, path, outcome, count) VALUES (now(), 'modern', 'error', 1000000)",
        "SELECT count(*) FROM cutover.operation_ledger",
        "INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path) "
            + "VALUES ('another-tenant', 'forged', '\\x00', 'd', 1, 'modern')",
        "DELETE FROM cutover.readers",
        "SELECT cutover.record_outcomes(ARRAY['modern'], ARRAY['error'], ARRAY[9223372036854775807])",
        "SELECT cutover.reader_heartbeat('soak-app-1', 'squatter', '0', ARRAY[NULL, 'v2'], 'a-token-of-its-own')",
    ]

    /// Runs until `isDone`: makes its role, squats, tries every attempt again and again at random
    /// moments, and drops its role at the end.
    static func run(configuration: PostgresConfiguration, counts: SoakCommand.FaultCounts, isDone: () -> Bool) {
        let role = "cutover_soak_squatter_\(getpid())"
        let password = UUID().uuidString
        do {
            try withOwner(configuration) { owner in
                let name = try owner.quoteIdentifier(role)
                try owner.execute(unsafeSQL: "DROP ROLE IF EXISTS \(name); CREATE ROLE \(name) LOGIN PASSWORD '\(password)'")
                try owner.execute(unsafeSQL: try SQLFiles.text("roles/grant_application.sql").replacing("cutover_app", with: name))
            }
        } catch {
            counts.add("squatter unavailable (it needs a role it may create)")
            return
        }
        defer {
            try? withOwner(configuration) { owner in
                let name = try owner.quoteIdentifier(role)
                try owner.execute(unsafeSQL: "DROP OWNED BY \(name); DROP ROLE \(name)")
            }
        }
        var squatter = configuration
        squatter.parameters["user"] = role
        squatter.parameters["password"] = password
        var connection: PostgresConnection?
        while !isDone() {
            do {
                if connection?.isConnected != true {
                    let opened = try PostgresConnection(configuration: squatter)
                    // The advisory lock earlier runners took, held for the whole session.
                    try opened.query("SELECT pg_advisory_lock(\(Int32(0x6375_746f)), \(Int32(0x7275_6e72)))")
                    counts.add("squatter held the old runner lock")
                    connection = opened
                }
                guard let connection else { continue }
                let attempt = attempts.randomElement() ?? attempts[0]
                do {
                    try connection.execute(unsafeSQL: attempt)
                    counts.add("squatter write went through")
                } catch let error as PostgresError where error.sqlState != nil && connection.isConnected {
                    counts.add("squatter refused")
                }
            } catch {
                // The soak restarts the server and terminates backends: connect again.
                counts.add("squatter reconnect")
                connection = nil
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.1))
        }
    }

    private static func withOwner(_ configuration: PostgresConfiguration, _ body: (PostgresConnection) throws -> Void) throws {
        var named = configuration
        named.applicationName = "cutover-soak-squat-setup"
        try body(try PostgresConnection(configuration: named))
    }
}
