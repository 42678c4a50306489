import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("PgBouncer harness")
struct PgBouncerHarnessTests {
    @Test(.timeLimit(.minutes(2)))
    func clientsShareTheSmallPoolAndStopRemovesEverything() async throws {
        let database = try await TestPostgres.database("pgbouncer_harness")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolMode: .transaction, poolSize: 1))
        let directory = pooler.directory
        #expect(url.contains(":\(pooler.port)/"))
        let (first, second, mode) = try await onThread {
            let one = try PostgresConnection(configuration: .init(connectionString: url))
            let two = try PostgresConnection(configuration: .init(connectionString: url))
            // One server connection for two clients: both see the same backend, one after the other.
            let first = try one.execute(unsafeSQL: "SELECT pg_backend_pid() AS pid, current_database() AS db")[0]
            let second = try two.execute(unsafeSQL: "SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
            #expect(try first.decode(String.self, "db") == database.name)
            let admin = try PostgresConnection(configuration: .init(connectionString: pooler.adminConnectionString))
            let pools = try admin.execute(unsafeSQL: "SHOW POOLS")
            let mode = try pools.first { try $0.decode(String.self, "database") == database.name }?.decode(String.self, "pool_mode")
            return (try first.decode(Int32.self, "pid"), second, mode)
        }
        #expect(first == second)
        #expect(mode == "transaction")
        try await onThread { pooler.stop() }
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(throws: PostgresError.self) {
            _ = try PostgresConnection(configuration: .init(connectionString: url, connectTimeout: .seconds(2)))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func sessionModeKeepsAServerConnectionPerClient() async throws {
        let database = try await TestPostgres.database("pgbouncer_session")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolMode: .session, poolSize: 2))
        defer { pooler.stop() }
        let pids = try await onThread {
            let one = try PostgresConnection(configuration: .init(connectionString: url))
            let two = try PostgresConnection(configuration: .init(connectionString: url))
            return try [one, two, one].map { try $0.execute(unsafeSQL: "SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid") }
        }
        #expect(pids[0] != pids[1])
        #expect(pids[0] == pids[2])
    }
}
