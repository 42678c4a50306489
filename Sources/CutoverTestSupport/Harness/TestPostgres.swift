import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Synchronization

/// The PostgreSQL server the integration tests run against, and a database per suite.
///
/// With `DATABASE_URL` set, that server is used (its role needs CREATEDB). Otherwise one
/// ephemeral cluster is started for the whole test process on first use, and stopped and
/// deleted when the process exits (a watchdog does it if the process dies). When no server can
/// be had, ``database(_:)`` throws with the reason, so the tests fail rather than pass unseen.
public enum TestPostgres {
    private static let server = Mutex<Task<Server, any Error>?>(nil)
    private static let created = Mutex<[String]>([])
    private static let counter = Atomic<Int>(0)
    private static let ownCluster = Mutex<EphemeralCluster?>(nil)

    /// How long a test waits to connect. Hundreds of tests start at once on a machine of two
    /// cores, beside servers that other tests start, so a connection may wait its turn for long:
    /// that is load, not a failure of what a test asserts.
    public static let connectTimeout: Duration = .seconds(60)

    /// The server in use: a URL for its maintenance database, and the cluster when we own it.
    public struct Server: Sendable {
        /// A connection string for the server's `postgres` database.
        public let adminConnectionString: String
        /// The ephemeral cluster, when the tests started one.
        package let cluster: EphemeralCluster?
    }

    /// The server, started on first use.
    public static func shared() async throws -> Server {
        let task = server.withLock { task in
            if let task { return task }
            let started = Task { try await start() }
            task = started
            return started
        }
        return try await task.value
    }

    /// A new, empty database for one suite, so that suites never see each other's rows.
    ///
    /// - Parameter label: a name for the suite, kept in the database's name for diagnosis.
    public static func database(_ label: String) async throws -> TestDatabase {
        let server = try await shared()
        let safeLabel = String(label.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(30))
        let name = "t_\(safeLabel)_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
        let admin = PostgresPool(configuration: adminConfiguration(server), maximumConnections: 1)
        defer { Task { await admin.shutdown() } }
        try await admin.withConnection { connection in
            try connection.execute(unsafeSQL: "CREATE DATABASE " + connection.quoteIdentifier(name))
        }
        created.withLock { $0.append(name) }
        return TestDatabase(name: name, connectionString: connectionString(server.adminConnectionString, database: name))
    }

    private static func adminConfiguration(_ server: Server) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: server.adminConnectionString, applicationName: "cutover-tests",
                              connectTimeout: TestPostgres.connectTimeout)
    }

    private static func start() async throws -> Server {
        if let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty {
            atexit { TestPostgres.dropCreatedDatabases() }
            return Server(adminConnectionString: url, cluster: nil)
        }
        // Hundreds of tests run at once, each with pools of its own and phase binaries that open
        // a runner's, a checker's and sometimes a file's session: 300 slots run out.
        let cluster = try await EphemeralCluster.start(options: .init(settings: ["max_connections": "1000"]))
        ownCluster.withLock { $0 = cluster }
        atexit { TestPostgres.stopCluster() }
        return Server(adminConnectionString: cluster.url(), cluster: cluster)
    }

    /// Replaces the database of a connection string (URI or keyword/value form).
    public static func connectionString(_ base: String, database: String) -> String {
        if base.hasPrefix("postgres://") || base.hasPrefix("postgresql://"),
           var components = URLComponents(string: base) {
            components.path = "/" + database
            return components.string ?? base
        }
        return base + " dbname='" + database.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    /// Replaces the host and port of a `postgresql://` URI, keeping its user, password,
    /// database and parameters: for a proxy or pooler in front of the server.
    public static func connectionString(_ base: String, host: String, port: Int) throws -> String {
        guard var components = URLComponents(string: base), components.scheme == "postgresql" || components.scheme == "postgres" else {
            throw PostgresError(code: .invalidConfiguration, message: "the test database's connection string is not a URI")
        }
        components.host = host
        components.port = port
        return components.string ?? base
    }

    private static func stopCluster() {
        ownCluster.withLock { $0 }?.stop()
    }

    private static func dropCreatedDatabases() {
        let names = created.withLock { $0 }
        guard !names.isEmpty, let url = ProcessInfo.processInfo.environment["DATABASE_URL"],
              let connection = try? PostgresConnection(configuration: .init(connectionString: url)) else { return }
        for name in names {
            if let quoted = try? connection.quoteIdentifier(name) {
                _ = try? connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)")
            }
        }
    }
}

/// A database created for one suite.
public struct TestDatabase: Sendable {
    /// The database's name.
    public let name: String
    /// A connection string for it (it carries the server's password when there is one).
    public let connectionString: String

    /// A configuration for it.
    public func configuration(applicationName: String? = nil) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: connectionString, applicationName: applicationName,
                              connectTimeout: TestPostgres.connectTimeout)
    }

    /// A ``LossyProxy`` in front of this database's server and a connection string to the
    /// database through it, for tests of lost replies.
    package func throughLossyProxy() throws -> (proxy: LossyProxy, connectionString: String) {
        let components = URLComponents(string: connectionString)
        let proxy = try LossyProxy(targetHost: components?.host ?? "127.0.0.1", targetPort: components?.port ?? 5432)
        return (proxy, try TestPostgres.connectionString(connectionString, host: "127.0.0.1", port: proxy.port))
    }

    /// Opens a connection to it (blocking: for tests).
    public func connect(applicationName: String? = nil) throws -> PostgresConnection {
        try PostgresConnection(configuration: configuration(applicationName: applicationName))
    }

    /// Ends the server process `pid` as an administrator would (`pg_terminate_backend`, waiting
    /// up to 5 s for it to go), from a connection of its own; true when it went.
    public func terminateBackend(_ pid: Int32) async throws -> Bool {
        try await runOnDedicatedThread {
            try connect().query("SELECT pg_terminate_backend(\(pid), \(5000)) AS done")[0].decode(Bool.self, "done")
        }
    }
}
