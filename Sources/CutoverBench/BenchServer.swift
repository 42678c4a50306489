import EphemeralPostgres
import Foundation
import PostgresClient

/// The PostgreSQL server the benchmark runs against, and its databases.
///
/// Either an ephemeral cluster started with durable settings (fsync, synchronous_commit and
/// full_page_writes on, as a production server has them, so that commit cost is real) or the
/// server of `--database-url`. Each scenario gets a database of its own, dropped at the end.
final class BenchServer: Sendable {
    /// The connection string of the server's maintenance database.
    let adminURL: String
    /// The cluster, when the benchmark started one.
    let cluster: EphemeralCluster?
    /// What the benchmark knows about the server's settings, for the report.
    let description: String

    private init(adminURL: String, cluster: EphemeralCluster?, description: String) {
        self.adminURL = adminURL
        self.cluster = cluster
        self.description = description
    }

    /// Starts an ephemeral durable cluster, or uses `databaseURL`.
    static func start(databaseURL: String?) async throws -> BenchServer {
        if let databaseURL {
            return BenchServer(adminURL: databaseURL, cluster: nil, description: "the server of --database-url")
        }
        let cluster = try await EphemeralCluster.start(options: .init(isDurable: true))
        return BenchServer(adminURL: cluster.url(), cluster: cluster,
                           description: "ephemeral cluster, fsync on, synchronous_commit on, full_page_writes on, shared_buffers 128MB, other settings default")
    }

    /// A connection string for `database` on the server.
    func url(database: String) -> String {
        guard adminURL.hasPrefix("postgres://") || adminURL.hasPrefix("postgresql://"),
              var components = URLComponents(string: adminURL) else {
            return adminURL + " dbname=" + database
        }
        components.path = "/" + database
        return components.string ?? adminURL
    }

    /// A configuration for `database`.
    func configuration(database: String, applicationName: String = "cutover-bench") -> PostgresConfiguration {
        PostgresConfiguration(connectionString: url(database: database), applicationName: applicationName,
                              connectTimeout: .seconds(10))
    }

    /// How pgbench reaches `database`: the connection string without its password, which
    /// travels in PGPASSWORD instead, so that it never shows on a command line.
    func pgbenchTarget(database: String) -> (connectionString: String, environment: [String: String]) {
        let full = url(database: database)
        guard var components = URLComponents(string: full), let password = components.password else {
            return (full, [:])
        }
        components.password = nil
        return (components.string ?? full, ["PGPASSWORD": password])
    }

    /// Drops `database` if it exists and creates it empty.
    func recreateDatabase(_ database: String) async throws {
        let admin = PostgresConfiguration(connectionString: adminURL, applicationName: "cutover-bench")
        try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: admin)
            let name = try connection.quoteIdentifier(database)
            try connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            try connection.execute(unsafeSQL: "CREATE DATABASE \(name)")
        }
    }

    /// Drops `database`.
    func dropDatabase(_ database: String) async {
        let admin = PostgresConfiguration(connectionString: adminURL, applicationName: "cutover-bench")
        _ = try? await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: admin)
            try connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(try connection.quoteIdentifier(database)) WITH (FORCE)")
        }
    }

    /// The server's CPU clock, when the server runs on this machine under the benchmark.
    var cpuClock: CPUClock.Server? {
        cluster.flatMap { CPUClock.Server(dataDirectory: $0.dataDirectory) }
    }

    /// Stops the cluster, if the benchmark started one.
    func stop() {
        cluster?.stop()
    }
}
