import CutoverPostgres
import PostgresClient

/// A database of the benchmark's server, made afresh for one scenario.
struct BenchDatabase: Sendable {
    let name: String
    let server: BenchServer

    /// Drops and creates `name` on `server`.
    static func create(_ name: String, on server: BenchServer) async throws -> BenchDatabase {
        try await server.recreateDatabase(name)
        return BenchDatabase(name: name, server: server)
    }

    var configuration: PostgresConfiguration { server.configuration(database: name) }

    /// How pgbench reaches it.
    var pgbenchTarget: (connectionString: String, environment: [String: String]) {
        server.pgbenchTarget(database: name)
    }

    /// Runs blocking work on a new connection, on a thread of its own.
    @discardableResult
    func sql<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let configuration = configuration
        return try await runOnDedicatedThread(named: "cutover-bench-sql") {
            try body(PostgresConnection(configuration: configuration))
        }
    }

    /// Runs files of the built-in drafts plan (`sql/drafts/NAME.sql`), each as the runner would.
    static func runPlanFiles(_ names: [String], on connection: PostgresConnection) throws {
        for name in names { try connection.execute(unsafeSQL: try SQLFiles.text("drafts/\(name).sql")) }
    }

    func drop() async {
        await server.dropDatabase(name)
    }
}
