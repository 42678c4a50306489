import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// A migration beside a real hot standby, through the built `phase` binary: the standby's
/// sessions and the readers that read from it count for contract, and `status`, `readers` and
/// `check` show it with its lag and its settings.
@Suite("standbys in the fleet", .timeLimit(.minutes(3)))
struct StandbyWorkflowTests {
    /// A primary with the legacy drafts table in database `app`, and a hot standby of it that
    /// cancels conflicting queries at once (`hot_standby_feedback` off, no streaming delay).
    private static func clusters() async throws -> (primary: EphemeralCluster, standby: EphemeralCluster) {
        let primary = try await EphemeralCluster.start()
        do {
            try await onThread {
                try PostgresConnection(configuration: primary.configuration()).execute(unsafeSQL: "CREATE DATABASE app")
                let connection = try PostgresConnection(configuration: primary.configuration(database: "app"))
                try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
                try connection.query("""
                    INSERT INTO drafts (id, title, revision) SELECT 'seed-' || lpad(n::text, 4, '0'), 'Seed ' || n, 1
                      FROM generate_series(1, 300) AS n
                    """)
            }
            // Replies every second, so that the primary hears of replay soon after it resumes.
            let standby = try await primary.startStandby(settings: ["hot_standby_feedback": "off", "max_standby_streaming_delay": "0",
                                                                    "wal_receiver_status_interval": "1s"])
            return (primary, standby)
        } catch {
            primary.stop()
            throw error
        }
    }

    /// Waits, bounded, until `query` on `configuration`'s server returns true. On the standby,
    /// whose settings here cancel a query that conflicts with replay (what the check warns of),
    /// and may end a session that conflict reaches between two queries, every query runs
    /// through `StandbyOptions.run(on:configuration:)`, which asks it again.
    private static func wait(until query: String, on configuration: PostgresConfiguration) throws {
        var session: PostgresConnection?
        let deadline = ContinuousClock.now + .seconds(90)
        while try !StandbyOptions.run(on: &session, configuration: configuration, { try $0.query(PostgresQuery(unsafeSQL: query))[0].decode(Bool.self, at: 0) }) {
            guard ContinuousClock.now < deadline else { throw PostgresError(code: .unexpectedResponse, message: "never true: \(query)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Runs `sql` on the standby `configuration` reaches, again when its replay interrupted it.
    private static func execute(_ sql: String, onStandby configuration: PostgresConfiguration) throws {
        var session: PostgresConnection?
        try StandbyOptions.run(on: &session, configuration: configuration) { _ = try $0.execute(unsafeSQL: sql) }
    }

    @Test func aStandbySessionAndAStandbyReaderBlockContractAndTheStandbyIsShownWithItsLag() async throws {
        let (primary, standby) = try await Self.clusters()
        defer { standby.stop(); primary.stop() }
        let url = primary.url(database: "app")
        let standbyURL = standby.url(database: "app")
        let listed = "127.0.0.1:\(standby.port)"
        func phase(_ arguments: String...) async throws -> PhaseBinary.Run {
            try await onThread { try PhaseBinary.run(arguments, databaseURL: url) }
        }
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            let run = try await onThread { try PhaseBinary.run(step, databaseURL: url) }
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }
        let name = try await onThread {
            try PostgresConnection(configuration: primary.configuration()).query("SELECT application_name FROM pg_stat_replication")[0]
                .decode(String.self, "application_name")
        }

        // Before backfill, the settings that make recovery conflicts likely are a warning, not a failed check.
        let check = try await phase("check", "backfill", "--standby", standbyURL)
        #expect(check.status == 0, "\(check.output)\(check.diagnostics)")
        #expect(check.output.contains("warning: standby \(listed): hot_standby_feedback is off and max_standby_streaming_delay is 0: every standby query"),
                "\(check.output)")
        #expect(check.output.contains("recovery conflicts: snapshot 0, lock 0, buffer pin 0, deadlock 0, tablespace 0"), "\(check.output)")
        let password = try #require(URLComponents(string: standbyURL)?.password)
        #expect(!check.diagnostics.contains(password) && !check.output.contains(password), "no password is printed")
        // With the standby's replay paused, backfill waits under its ceiling and says so on
        // standard error; it finishes once replay resumes.
        try await onThread { try Self.execute("SELECT pg_wal_replay_pause()", onStandby: standby.configuration()) }
        let started = try await onThread {
            try PhaseBinary.start(["backfill", "--batch-size", "10", "--batch-delay", "100ms", "--max-replica-lag", "1s"], databaseURL: url)
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while try !String(contentsOf: started.diagnostics, encoding: .utf8).contains("backfill waits for standby \(name) (127.0.0.1): replay lag "),
              ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await onThread { try Self.execute("SELECT pg_wal_replay_resume()", onStandby: standby.configuration()) }
        let backfill = try await onThread { try PhaseBinary.finish(started) }
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains("backfill waits for standby \(name) (127.0.0.1): replay lag "), "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains(") is over the ceiling of 1.0s"), "\(backfill.diagnostics)")

        // status and readers show the standby, reported by the primary and matched to the one listed.
        try await onThread {
            try Self.wait(until: "SELECT count(*) = 0 FROM drafts WHERE document IS NULL", on: standby.configuration(database: "app"))
        }
        let status = try await phase("status", "--standby", standbyURL)
        #expect(status.status == 0, "\(status.diagnostics)")
        #expect(status.output.contains("  \(name) (127.0.0.1), reported by the primary: streaming, replay lag "), "\(status.output)")
        #expect(status.output.contains("; listed as \(listed), matched by its application_name '\(name)'"), "\(status.output)")
        let readers = try await phase("--format", "json", "readers", "--standby", standbyURL)
        #expect(readers.status == 0, "\(readers.diagnostics)")
        #expect(readers.output.contains(#""replayLagBytes""#), "\(readers.output)")
        #expect(readers.output.contains(#""applicationName": "\#(name)""#), "\(readers.output)")
        let reported = try await phase("readers")
        #expect(reported.output.contains("\(name) (127.0.0.1), reported by the primary: streaming"), "\(reported.output)")
        #expect(reported.output.contains("not inspected: list it with --standby URL"), "\(reported.output)")

        // A legacy application reading from the standby blocks contract, named with its standby.
        let legacy = try await onThread {
            HeldSession(try StandbyOptions.connect(to: standby.configuration(database: "app", applicationName: "legacy-reports")))
        }
        let refused = try await phase("contract", "--yes", "--window", "0s", "--standby", standbyURL)
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains(
            "check failed: no legacy session connected: expected none connected matching 'legacy-%', observed 1 connected: on standby \(listed): pid \(legacy.backendPID) (legacy-reports)"),
                "\(refused.diagnostics)")
        // Not listed, the standby is reported yet not inspected: contract refuses until it is
        // listed or named as allowed.
        let unlisted = try await phase("check", "contract")
        #expect(unlisted.status == 3)
        #expect(unlisted.output.contains("FAILED every standby inspected: expected every reported or listed standby inspected, observed \(name) (127.0.0.1) reported by the primary but not inspected"),
                "\(unlisted.output)")
        // A listed server that is no standby of this primary, or that cannot be reached, is a
        // finding too: its sessions cannot be trusted or seen.
        let wrong = try await phase("check", "contract", "--standby", standbyURL, "--standby", url, "--standby", "postgresql://127.0.0.1:1/app")
        #expect(wrong.status == 3)
        #expect(wrong.output.contains("FAILED every standby inspected"), "\(wrong.output)")
        #expect(wrong.output.contains("127.0.0.1:\(primary.port) is not in recovery: it was promoted, or it is a primary"), "\(wrong.output)")
        #expect(wrong.output.contains("postgresql://127.0.0.1:1/app cannot connect: "), "\(wrong.output)")
        #expect(wrong.output.contains("; listed as \(listed), matched by its application_name '\(name)'"), "\(wrong.output)")
        let allowed = try await phase("check", "contract", "--allow-uninspected-standby", name)
        #expect(allowed.output.contains("ok     every standby inspected: expected every reported or listed standby inspected, observed 0 inspected; allowed uninspected: \(name) (127.0.0.1)"),
                "\(allowed.output)")
        let pid = legacy.backendPID
        legacy.close()
        try await onThread {
            try Self.wait(until: "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = \(pid)", on: standby.configuration(database: "app"))
        }

        // A reader that reads only from the standby registers through the primary; reading v1
        // only, it blocks contract too.
        let token = ReaderRegistry.makeToken()
        try await onThread {
            try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "reports-1", applicationName: "reports", applicationVersion: "1.0", formats: ["v1"],
                                         token: token, on: try PostgresConnection(configuration: primary.configuration(database: "app")))
        }
        let reader = try await phase("contract", "--yes", "--window", "0s", "--standby", standbyURL)
        #expect(reader.status == 3, "\(reader.diagnostics)")
        #expect(reader.diagnostics.contains("check failed: no live reader needs v1: expected none, observed 1 live: reports-1 (reports 1.0: v1)"),
                "\(reader.diagnostics)")
        #expect(!reader.diagnostics.contains("no legacy session connected"), "\(reader.diagnostics)")

        // With the reader gone and the standby inspected, contract runs.
        try await onThread {
            _ = try ReaderRegistry.leave(plan: "drafts", instanceID: "reports-1", token: token,
                                     on: try PostgresConnection(configuration: primary.configuration(database: "app")))
        }
        let contract = try await phase("contract", "--yes", "--window", "0s", "--standby", standbyURL)
        #expect(contract.status == 0, "\(contract.diagnostics)")
    }
}

/// A session the test holds open while `phase` runs, then closes.
final class HeldSession: @unchecked Sendable {
    // Safe: the connection is only ever touched under the lock, by one thread at a time.
    private let lock = NSLock()
    private var connection: PostgresConnection?
    let backendPID: Int32

    init(_ connection: PostgresConnection) {
        self.connection = connection
        backendPID = connection.backendPID
    }

    /// Ends the session.
    func close() { lock.withLock { connection = nil } }
}
