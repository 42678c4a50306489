import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

@Suite("Ephemeral cluster")
struct EphemeralClusterTests {
    @Test(.timeLimit(.minutes(3)))
    func aPoolSurvivesAServerRestartAndStopRemovesEverything() async throws {
        let cluster = try await EphemeralCluster.start()
        let directory = cluster.directory
        #expect(FileManager.default.fileExists(atPath: cluster.dataDirectory))
        let pool = PostgresPool(configuration: cluster.configuration(), maximumConnections: 2)
        let before = try await pool.withConnection { $0.backendPID }
        try await onThread { try cluster.restartImmediately() }
        let (after, answer) = try await pool.withConnection { connection in
            (connection.backendPID, try connection.query("SELECT \(1) AS n")[0].decode(Int.self, "n"))
        }
        #expect(after != before)
        #expect(answer == 1)
        await pool.shutdown()
        try await onThread { cluster.stop() }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func itsURLCarriesAPasswordThatTheServerRequires() async throws {
        let cluster = try await EphemeralCluster.start()
        defer { cluster.stop() }
        let url = cluster.url()
        var components = try #require(URLComponents(string: url))
        #expect(components.password?.count == 32)
        components.password = "not-the-password"
        let wrong = try #require(components.string)
        let failure = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: .init(connectionString: wrong)); return nil } catch let error as PostgresError { return error }
        }
        #expect(failure?.description.contains("password authentication failed") == true)
        let ok = try await onThread { try PostgresConnection(configuration: .init(connectionString: url)).isConnected }
        #expect(ok)
    }
    @Test(.timeLimit(.minutes(3)))
    func aStandbyReplaysThePrimarysWritesAndRefusesWritesOfItsOwn() async throws {
        let primary = try await EphemeralCluster.start()
        defer { primary.stop() }
        let standby = try await primary.startStandby()
        let standbyDirectory = standby.directory
        try await onThread {
            let writer = try PostgresConnection(configuration: primary.configuration())
            try writer.execute(unsafeSQL: "CREATE TABLE replicated (n int); INSERT INTO replicated VALUES (7)")
            let lsn = try writer.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")[0].decode(String.self, "lsn")
            let reader = try PostgresConnection(configuration: standby.configuration())
            #expect(try reader.query("SELECT pg_is_in_recovery() AS r")[0].decode(Bool.self, "r"))
            // Wait for the standby to replay past the write, bounded.
            let deadline = ContinuousClock.now + .seconds(30)
            while try !reader.query("SELECT pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn AS done")[0].decode(Bool.self, "done") {
                guard ContinuousClock.now < deadline else { Issue.record("the standby never replayed \(lsn)"); return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(try reader.query("SELECT n FROM replicated")[0].decode(Int.self, "n") == 7)
            #expect(throws: PostgresError.self) { try reader.execute(unsafeSQL: "INSERT INTO replicated VALUES (8)") }
            let senders = try writer.query("SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming'")
            #expect(try senders[0].decode(Int.self, "n") == 1)
        }
        standby.stop()
        #expect(!FileManager.default.fileExists(atPath: standbyDirectory))
    }
}
