import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Ephemeral cluster")
struct EphemeralClusterTests {
    @Test(.timeLimit(.minutes(2)))
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
}
