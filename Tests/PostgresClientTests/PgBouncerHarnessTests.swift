import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("PgBouncer harness")
struct PgBouncerHarnessTests {
    @Test(.timeLimit(.minutes(3)))
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

    @Test(.timeLimit(.minutes(3)))
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

    @Test(.timeLimit(.minutes(3)))
    func statementModeCarriesAPipelinedTransactionButRefusesAnInteractiveOne() async throws {
        // What the pooler runbook says of statement mode: the statement and its Sync travel in
        // one pipeline, and the server commits at the Sync, so PgBouncer sees one exchange; a
        // transaction that waits for its client between statements is refused.
        let database = try await TestPostgres.database("pgbouncer_statement")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolMode: .statement, poolSize: 1))
        defer { pooler.stop() }
        try await onThread { try database.connect().execute(unsafeSQL: "CREATE TABLE items (n int)") }
        let pool = PostgresPool(configuration: .init(connectionString: url), maximumConnections: 1)
        let inserted = try await pool.pipelinedTransaction("INSERT INTO items VALUES (\(1)) RETURNING n")[0].decode(Int.self, "n")
        #expect(inserted == 1)
        await #expect(throws: PostgresError.self) {
            try await pool.withTransaction { try $0.query("INSERT INTO items VALUES (\(2))") }
        }
        await pool.shutdown()
        let values = try await onThread {
            try database.connect().query("SELECT n FROM items ORDER BY n").map { try $0.decode(Int.self, "n") }
        }
        #expect(values == [1])
    }
}
