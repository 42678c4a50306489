import CutoverPostgres
import Foundation
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

    /// Creates the legacy drafts table as the built-in plan starts from (`sql/drafts/baseline.sql`).
    static func createLegacyTable(on connection: PostgresConnection) throws {
        try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
    }

    /// Applies the built-in drafts plan's expand files, each in one exchange as the runner
    /// would, without the runner's bookkeeping.
    static func expandBuiltInPlan(on connection: PostgresConnection) throws {
        try expand(PlanSource.builtIn(), on: connection)
    }

    /// Applies `source`'s expand files, each in one exchange as the runner would, without the
    /// runner's bookkeeping.
    static func expand(_ source: PlanSource, on connection: PostgresConnection) throws {
        for file in source.plan.step(.expand)?.apply(onServerVersionNumber: connection.serverVersion) ?? [] {
            try connection.execute(unsafeSQL: source.text(file.path))
        }
        // As the runner does with the step's last file: the plan's save function, made for the new columns.
        try RecordPlanRegistry.remakeSave(plan: source.plan.name, on: connection)
    }

    /// Makes `examples/orders-status-code`'s `orders` table, registers the plan's entity as
    /// `phase init` does, and expands it; the control schema must be installed.
    static func createExpandedOrders(on connection: PostgresConnection) throws {
        let folder = BenchOptions.repositoryRoot.appendingPathComponent("examples/orders-status-code").path
        let source = try PlanSource.folder(folder)
        try connection.execute(unsafeSQL: try String(contentsOfFile: folder + "/schema.sql", encoding: .utf8))
        guard let declaration = source.compiled?.declaration else {
            throw BenchError("\(folder)/plan.json is not a declarative plan")
        }
        try RecordPlanRegistry.register(declaration, on: connection)
        try expand(source, on: connection)
    }

    func drop() async {
        await server.dropDatabase(name)
    }
}
