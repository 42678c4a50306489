import CutoverTestSupport
import Foundation
import Testing

/// Every session `phase` opens is bounded on the server's side too: statement and lock
/// timeouts, an idle-in-transaction timeout, keepalives, a check for a vanished client, and
/// row-level security that fails a statement rather than filter its rows.
@Suite("Session bounds", .timeLimit(.minutes(3)))
struct SessionBoundsTests {
    @Test func theRunnersSessionCarriesItsBoundsAndTheUsersOptionsStillApply() async throws {
        let db = try await WorkflowDatabase.make("session_bounds", rows: 5)
        let folder = try PlanFolder.copyOfDrafts("session-bounds")
        defer { folder.remove() }
        // A check runs on the runner's check session, which phase opens like its own, and reports
        // what is in force there: the session's bounds, with the check's own statement and lock
        // timeouts (30s, and --lock-timeout's 500ms) set for its transaction on top.
        let settings = """
            SELECT current_setting('statement_timeout') = '30s' AND current_setting('lock_timeout') = '500ms' \
            AND current_setting('idle_in_transaction_session_timeout') = '1min' \
            AND current_setting('client_connection_check_interval') = '5s' \
            AND current_setting('tcp_keepalives_idle') = '10' AND current_setting('tcp_keepalives_interval') = '5' \
            AND current_setting('tcp_keepalives_count') = '3' AND current_setting('row_security') = 'off' \
            AND current_setting('work_mem') = '7MB'
            """
        try folder.editManifest { $0.replacing("SELECT to_regclass('drafts') IS NOT NULL", with: settings) }
        #expect(try await db.phase(["--plan", folder.path, "init"]).status == 0)
        let url = db.url + (db.url.contains("?") ? "&" : "?") + "options=-c%20work_mem%3D7MB"
        let run = try await onThread { try PhaseBinary.run(["--plan", folder.path, "check", "expand"], databaseURL: url) }
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
    }
}
