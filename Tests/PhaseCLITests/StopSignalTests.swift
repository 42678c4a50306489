import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// SIGINT, SIGTERM and SIGHUP stop a command with one line and 128 + the signal, cancelling the
/// statement it was waiting on, so that its server session does not outlive it.
@Suite("Stop signals", .timeLimit(.minutes(3)))
struct StopSignalTests {
    static let sleepingCheck = "SELECT pg_sleep(3600) IS NOT NULL"

    @Test("a command blocked in a long server statement stops promptly and its session goes", arguments: [
        (SIGINT, ["check"], "stopped by SIGINT during check; it changed nothing: run it again when ready"),
        (SIGTERM, ["expand"],
         "stopped by SIGTERM during expand; nothing is half done that 'phase expand' cannot finish: run it again, or 'phase status'"),
        (SIGHUP, ["status"], "stopped by SIGHUP during status; it changed nothing: run it again when ready"),
    ])
    func stops(signal: Int32, command: [String], line: String) async throws {
        let db = try await WorkflowDatabase.make("stop_signal_\(signal)", rows: 5)
        let folder = try PlanFolder.copyOfDrafts("sleeping-check")
        defer { folder.remove() }
        try folder.editManifest { $0.replacing("SELECT to_regclass('drafts') IS NOT NULL", with: Self.sleepingCheck) }
        #expect(try await db.phase(["--plan", folder.path, "init"]).status == 0)

        let started = try PhaseBinary.start(["--plan", folder.path] + command, databaseURL: db.url)
        let backend = try await Self.sleepingBackend(db)
        kill(started.pid, signal)
        // Far below the check's hour: the bound only turns a hang into a failure.
        let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(run.status == 128 + signal, "\(run.diagnostics)")
        #expect(run.diagnostics.split(separator: "\n").last.map(String.init) == line, "\(run.diagnostics)")
        #expect(run.diagnostics.components(separatedBy: "stopped by").count == 2, "one stop line: \(run.diagnostics)")
        #expect(try await Self.isGone(backend, db), "backend \(backend) still there")
    }

    @Test func aRunnerKilledMidStatementLosesItsSessionAndTheLockWithIt() async throws {
        let db = try await WorkflowDatabase.make("stop_killed_runner", rows: 5)
        let folder = try PlanFolder.copyOfDrafts("sleeping-check")
        defer { folder.remove() }
        try folder.editManifest { $0.replacing("SELECT to_regclass('drafts') IS NOT NULL", with: Self.sleepingCheck) }
        #expect(try await db.phase(["--plan", folder.path, "init"]).status == 0)
        // expand holds the runner lock while its check sleeps; SIGKILL leaves no chance to clean up.
        let started = try PhaseBinary.start(["--plan", folder.path, "expand"], databaseURL: db.url)
        let backend = try await Self.sleepingBackend(db)
        kill(started.pid, SIGKILL)
        _ = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        // The server notices the client is gone (client_connection_check_interval) although
        // the statement would sleep for an hour, and the plan's lease goes with the session.
        #expect(try await Self.isGone(backend, db), "backend \(backend) still there")
        #expect(try await db.sql { try RunnerLock.holder(plan: "drafts", on: $0) } == nil)
        let next = try await db.phase("status")
        #expect(next.status == 0 && !next.output.contains("runner at work"), "\(next.output)")
    }

    @Test func aStepStoppedInItsSQLIsRecordedInterruptedAndFinishesWhenRunAgain() async throws {
        let db = try await WorkflowDatabase.make("stop_in_sql", rows: 5)
        let folder = try PlanFolder.copyOfDrafts("sleeping-expand")
        defer { folder.remove() }
        let expand = try String(contentsOfFile: folder.path("expand.sql"), encoding: .utf8)
        try ("SELECT pg_sleep(3600);\n" + expand).write(toFile: folder.path("expand.sql"), atomically: true, encoding: .utf8)
        #expect(try await db.phase(["--plan", folder.path, "init"]).status == 0)
        let started = try PhaseBinary.start(["--plan", folder.path, "expand"], databaseURL: db.url)
        _ = try await db.sql { connection -> Int32 in
            while true {
                let rows = try connection.query("""
                    SELECT pid FROM pg_stat_activity
                     WHERE datname = current_database() AND application_name = 'cutover-phase' AND state = 'active'
                       AND query LIKE 'SELECT pg_sleep(3600);%'
                    """)
                if let row = rows.first { return try row.decode(Int32.self, "pid") }
            }
        }
        kill(started.pid, SIGINT)
        let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(run.status == 130, "\(run.diagnostics)")
        let outcome = try await db.value(String.self, "SELECT outcome FROM cutover.phase_history WHERE step = 'expand' ORDER BY id DESC LIMIT 1")
        #expect(outcome == "interrupted")
        #expect(try await db.phaseName() == "baseline")
        #expect(try await db.columns() == ["id", "title", "revision"])
        // The same plan without the sleep finishes it.
        try expand.write(toFile: folder.path("expand.sql"), atomically: true, encoding: .utf8)
        let again = try await db.phase(["--plan", folder.path, "expand"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(try await db.phaseName() == "expanded")
    }

    /// The backend of this database's `phase` session once it runs the sleeping check.
    private static func sleepingBackend(_ db: WorkflowDatabase) async throws -> Int32 {
        try await db.sql { connection -> Int32 in
            while true {
                let rows = try connection.query("""
                    SELECT pid FROM pg_stat_activity
                     WHERE datname = current_database() AND application_name = 'cutover-phase' AND state = 'active'
                       AND query = \(Self.sleepingCheck)
                    """)
                if let row = rows.first { return try row.decode(Int32.self, "pid") }
            }
        }
    }

    /// Whether backend `pid` ends, waiting for it within a bound that only turns a hang into a failure.
    private static func isGone(_ pid: Int32, _ db: WorkflowDatabase) async throws -> Bool {
        try await db.sql { connection -> Bool in
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if try connection.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(pid)")[0]
                    .decode(Int.self, "n") == 0 { return true }
            }
            return false
        }
    }
}
