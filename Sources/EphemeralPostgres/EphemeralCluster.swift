import Foundation
import PostgresClient
import Synchronization

/// A throw-away PostgreSQL server in a temporary folder, for tests and demos.
///
/// ``start(options:)`` runs `initdb` and `pg_ctl` on a free loopback port with a private socket
/// folder and a random superuser password; as root it runs them as the `postgres` user, since
/// PostgreSQL refuses to run as root. The programs come from the folder that the environment
/// variable `CUTOVER_PG_BINDIR` names when it is set (an error names it when it holds no
/// runnable `initdb` and `pg_ctl`), else from `PATH`, else from the newest
/// `/usr/lib/postgresql/*/bin`; ``binDirectory`` says which, so that other programs of the same
/// installation (`pg_basebackup`, `postgres`) can be found beside them. ``stop()`` stops the
/// server and deletes the folder. A watchdog
/// process does the same if this process dies without stopping it (a crash, SIGKILL, Ctrl-C).
///
/// ```swift
/// let cluster = try await EphemeralCluster.start()
/// defer { cluster.stop() }
/// let connection = try PostgresConnection(configuration: cluster.configuration())
/// ```
package final class EphemeralCluster: Sendable {
    /// How to start the cluster.
    package struct Options: Sendable {
        /// Server settings written to `postgresql.conf`.
        package var settings: [String: String]
        /// Trade durability for speed (`fsync`, `synchronous_commit` and `full_page_writes`
        /// off). Right for tests and demos; wrong for benchmarks of commit cost.
        package var isDurable: Bool
        /// How long to wait for the server to accept connections.
        package var startTimeout: Duration

        /// The defaults: fast and non-durable, 300 connections.
        package init(settings: [String: String] = [:], isDurable: Bool = false, startTimeout: Duration = .seconds(60)) {
            self.settings = settings
            self.isDurable = isDurable
            self.startTimeout = startTimeout
        }
    }

    /// The temporary folder holding the data, socket and log.
    package let directory: String
    /// The loopback TCP port the server listens on.
    package let port: Int
    /// The superuser's name.
    package let user: String
    let password: String
    let tools: PostgresTools
    private let isStopped = Atomic(false)

    /// The folder of the server programs this cluster runs: other programs of the same
    /// PostgreSQL installation, such as `pg_basebackup`, are found beside `initdb` here.
    package var binDirectory: String { tools.folder }
    /// The data folder.
    package var dataDirectory: String { directory + "/data" }
    /// The server's log file.
    package var logFile: String { directory + "/server.log" }

    init(directory: String, port: Int, user: String, password: String, tools: PostgresTools) {
        self.directory = directory
        self.port = port
        self.user = user
        self.password = password
        self.tools = tools
    }

    deinit { stop() }

    /// A `postgresql://` URI for a database of the cluster, password included: keep it out of
    /// logs (``PasswordRedaction`` removes it from any text).
    package func url(database: String = "postgres") -> String {
        var components = URLComponents()
        components.scheme = "postgresql"
        components.user = user
        components.password = password
        components.host = "127.0.0.1"
        components.port = port
        components.path = "/" + database
        return components.string!
    }

    /// A configuration for a database of the cluster. It waits up to 60 s to connect: a
    /// throw-away cluster shares its machine with whatever tests or demos run beside it.
    package func configuration(database: String = "postgres", applicationName: String? = nil) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: url(database: database), applicationName: applicationName,
                              connectTimeout: .seconds(60))
    }

    /// The folder of server programs that ``start(options:)`` would run, chosen from
    /// `CUTOVER_PG_BINDIR`, `PATH` and `/usr/lib/postgresql/*/bin` as the type's summary says.
    package static func locateBinDirectory() throws -> String {
        try PostgresTools.locateFolder(environment: ProcessInfo.processInfo.environment)
    }

    /// Starts a new cluster without blocking Swift's cooperative threads.
    package static func start(options: Options = Options()) async throws -> EphemeralCluster {
        try await runOnDedicatedThread(named: "cutover-cluster-start") { try startBlocking(options: options) }
    }

    /// Starts a new cluster, blocking the calling thread for the few seconds it takes.
    package static func startBlocking(options: Options = Options()) throws -> EphemeralCluster {
        let tools = try PostgresTools.locate()
        let directory = try tools.makePrivateDirectory()
        tools.startWatchdog(directory: directory)
        do {
            let password = randomHex(bytes: 16)
            let passwordFile = directory + "/pwfile"
            try tools.writeFile(passwordFile, contents: password + "\n")
            try tools.run(tools.initdb, ["-D", directory + "/data", "-U", "postgres", "--pwfile=" + passwordFile,
                                         "--auth-local=trust", "--auth-host=scram-sha-256",
                                         "--encoding=UTF8", "--locale=C", "--no-sync"],
                          log: directory + "/initdb.log", what: "initdb")
            try? FileManager.default.removeItem(atPath: passwordFile)
            try tools.makeSocketDirectory(directory + "/socket")
            let port = try startOnFreePort(tools: tools, directory: directory, startTimeout: options.startTimeout,
                                           what: "pg_ctl start") { port in
                baseSettings(port: port, directory: directory, options: options)
            }
            return EphemeralCluster(directory: directory, port: port, user: "postgres", password: password, tools: tools)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Starts the server of `directory/data` on a free loopback port with the settings made for
    /// that port, and returns the port. Another process may take the port between the probe and
    /// the start, so a start that cannot bind tries another port, three times in all.
    static func startOnFreePort(tools: PostgresTools, directory: String, startTimeout: Duration, what: String,
                                settings: (Int) -> [String: String]) throws -> Int {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try freeLoopbackPort()
            try tools.writeSettings(dataDirectory: directory + "/data", settings: settings(port))
            do {
                try tools.run(tools.pgCtl, ["start", "-D", directory + "/data", "-l", directory + "/server.log",
                                            "-w", "-t", String(startTimeout.components.seconds)],
                              log: directory + "/pg_ctl.log", what: what)
                return port
            } catch {
                lastError = error
                let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
                guard log.contains("could not bind") || log.contains("could not create any TCP/IP sockets") else {
                    throw error
                }
            }
        }
        throw lastError!
    }

    /// Stops the server at once (fast shutdown) and deletes its folder. Safe to call twice.
    package func stop() {
        guard isStopped.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        try? tools.run(tools.pgCtl, ["stop", "-D", dataDirectory, "-m", "fast", "-w", "-t", "30"],
                       log: nil, what: "pg_ctl stop")
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops the server abruptly (`immediate`, like a crash) and starts it again on the same
    /// port, as fault-injection tests need.
    package func restartImmediately() throws {
        try tools.run(tools.pgCtl, ["stop", "-D", dataDirectory, "-m", "immediate", "-w"], log: nil, what: "pg_ctl stop")
        try tools.run(tools.pgCtl, ["start", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60"],
                      log: nil, what: "pg_ctl start")
    }

    static func baseSettings(port: Int, directory: String, options: Options) -> [String: String] {
        var settings = [
            "listen_addresses": "'127.0.0.1'",
            "port": String(port),
            "unix_socket_directories": "'\(directory)/socket'",
            "max_connections": "300",
            "shared_buffers": "'128MB'",
            "logging_collector": "off",
            "log_min_messages": "warning",
        ]
        if !options.isDurable {
            settings["fsync"] = "off"
            settings["synchronous_commit"] = "off"
            settings["full_page_writes"] = "off"
        }
        settings.merge(options.settings) { _, new in new }
        return settings
    }

    /// A loopback TCP port that nothing listens on now (the kernel's choice), for a server to
    /// take; another process may take it first, so a start that cannot bind tries another.
    package static func freeLoopbackPort() throws -> Int {
        try LoopbackSocket(backlog: nil).port
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }
}

/// Why an ephemeral cluster could not be started.
package struct EphemeralClusterError: Error, Sendable, CustomStringConvertible {
    /// One line saying what failed and what to do.
    package var message: String
    package var description: String { message }
}
