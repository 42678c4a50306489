import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real PgBouncer (Debian's `pgbouncer`) in front of a PostgreSQL server, for tests of what
/// an application sees through a connection pooler.
///
/// ``start(server:options:)`` writes a `pgbouncer.ini` and a user list into a temporary folder,
/// starts `pgbouncer` on a free loopback port (as the `postgres` user when this process is
/// root: PgBouncer refuses root) and returns once it accepts connections. Every database of the
/// server is reachable through it under its own name; clients log in with the server's user
/// and password (SCRAM), and PgBouncer logs in to the server with the same. ``stop()`` stops it
/// and deletes the folder; a watchdog process does the same if this process dies first.
///
/// The pool is small on purpose (``Options/poolSize``, 2 by default), so that more clients
/// than that really share server connections, and in transaction mode a client's next
/// transaction may run on another client's server connection.
///
/// ```swift
/// let database = try await TestPostgres.database("through_pooler")
/// let (pooler, url) = try await database.throughPgBouncer()
/// defer { pooler.stop() }
/// let pool = PostgresPool(configuration: .init(connectionString: url), maximumConnections: 8)
/// ```
///
/// When `pgbouncer` is not installed, ``start(server:options:)`` throws, saying so: tests
/// that need it fail rather than pass unseen.
public final class PgBouncerProcess: Sendable {
    /// When PgBouncer gives a server connection back to the pool (its `pool_mode`).
    public enum PoolMode: String, Sendable {
        /// When the client disconnects.
        case session
        /// After each transaction: the mode that shares most and keeps least.
        case transaction
        /// After each statement; multi-statement transactions are refused.
        case statement
    }

    /// How to run PgBouncer.
    public struct Options: Sendable {
        /// `pool_mode`.
        public var poolMode: PoolMode
        /// `default_pool_size`: server connections per database and user.
        public var poolSize: Int
        /// `max_client_conn`.
        public var maximumClients: Int
        /// Further logins PgBouncer accepts and passes on to the server, by user name, with
        /// their passwords (roles a test created on the server).
        public var users: [String: String]
        /// Further `[pgbouncer]` settings, written as given (they win over the harness's).
        public var settings: [String: String]
        /// How long to wait for PgBouncer to accept connections.
        public var startTimeout: Duration

        /// Transaction mode, two server connections per database and user.
        public init(poolMode: PoolMode = .transaction, poolSize: Int = 2, maximumClients: Int = 200,
                    users: [String: String] = [:], settings: [String: String] = [:],
                    startTimeout: Duration = .seconds(60)) {
            self.poolMode = poolMode
            self.poolSize = poolSize
            self.maximumClients = maximumClients
            self.users = users
            self.settings = settings
            self.startTimeout = startTimeout
        }
    }

    /// The temporary folder holding the configuration, user list and log.
    public let directory: String
    /// The loopback TCP port PgBouncer listens on.
    public let port: Int
    /// The options it was started with.
    public let options: Options
    /// The process ID of `pgbouncer`.
    public let processID: Int32
    private let serverUser: String
    private let serverPassword: String
    private let stopped = Mutex(false)

    /// PgBouncer's log (its standard output and error).
    public var logFile: String { directory + "/pgbouncer.log" }

    private init(directory: String, port: Int, options: Options, processID: Int32, serverUser: String,
                 serverPassword: String) {
        self.directory = directory
        self.port = port
        self.options = options
        self.processID = processID
        self.serverUser = serverUser
        self.serverPassword = serverPassword
    }

    deinit { stop() }

    /// `connectionString` (a URI to the server behind this PgBouncer) with its host and port
    /// replaced by PgBouncer's; user, password, database and parameters are kept.
    public func connectionString(for connectionString: String) throws -> String {
        try TestPostgres.connectionString(connectionString, host: "127.0.0.1", port: port)
    }

    /// A URI for PgBouncer's admin console (database `pgbouncer`), where `SHOW POOLS`,
    /// `SHOW SERVERS` and `SHOW CLIENTS` say who holds which server connection. The console
    /// speaks the simple query protocol only: use `execute(unsafeSQL:)` or `simpleQuery`.
    public var adminConnectionString: String {
        var components = URLComponents()
        components.scheme = "postgresql"
        components.user = serverUser
        components.password = serverPassword
        components.host = "127.0.0.1"
        components.port = port
        components.path = "/pgbouncer"
        return components.string!
    }

    /// Starts PgBouncer in front of the server that `server` (a `postgresql://` URI with user
    /// and password, such as a ``TestDatabase``'s) names, without blocking Swift's
    /// cooperative threads.
    public static func start(server: String, options: Options = Options()) async throws -> PgBouncerProcess {
        try await onThread { try startBlocking(server: server, options: options) }
    }

    /// Starts PgBouncer, blocking the calling thread until it accepts connections.
    public static func startBlocking(server: String, options: Options = Options()) throws -> PgBouncerProcess {
        guard let components = URLComponents(string: server), let user = components.user,
              components.scheme == "postgresql" || components.scheme == "postgres" else {
            throw PgBouncerError(message: "cannot put PgBouncer in front of a server named by anything but a postgresql:// URI with a user")
        }
        let program = try locateProgram()
        let account = try ServerAccount.whenRoot(for: "PgBouncer")
        let directory = try ServerAccount.makePrivateDirectory(prefix: "cutover-pgbouncer", owner: account)
        do {
            var lastFailure = ""
            for _ in 0..<3 {
                // Bound and dropped at once: PgBouncer takes the port a moment later, and if
                // another process took it meanwhile, the attempt is made again.
                let port = try LoopbackSocket(backlog: nil).port
                try writeFiles(directory: directory, owner: account, port: port, options: options,
                               serverHost: components.host ?? "127.0.0.1", serverPort: components.port ?? 5432,
                               users: options.users.merging([user: components.password ?? ""]) { given, _ in given })
                let arguments = [program] + (account.map { ["-u", $0.name] } ?? []) + [directory + "/pgbouncer.ini"]
                let pid = try ChildProcess.spawn(arguments, output: directory + "/pgbouncer.log")
                startWatchdog(directory: directory, processID: pid)
                switch awaitListening(processID: pid, port: port, timeout: options.startTimeout, log: directory + "/pgbouncer.log") {
                case .listening:
                    return PgBouncerProcess(directory: directory, port: port, options: options, processID: pid,
                                            serverUser: user, serverPassword: components.password ?? "")
                case .exited(let status):
                    lastFailure = "pgbouncer exited with status \(status): \(logTail(directory))"
                    guard lastFailure.contains("Address already in use") else { throw PgBouncerError(message: lastFailure) }
                case .portTaken:
                    // PgBouncer 1.18 goes on with its Unix socket alone when the TCP port is
                    // taken: stop it and try another port.
                    kill(pid, SIGKILL)
                    _ = try? ChildProcess.wait(for: pid)
                    lastFailure = "pgbouncer could not listen on port \(port): \(logTail(directory))"
                    try? FileManager.default.removeItem(atPath: directory + "/pgbouncer.log")
                case .timedOut:
                    kill(pid, SIGKILL)
                    _ = try? ChildProcess.wait(for: pid)
                    throw PgBouncerError(message: "pgbouncer did not accept connections within \(options.startTimeout): \(logTail(directory))")
                }
            }
            throw PgBouncerError(message: lastFailure)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Stops PgBouncer at once and deletes its folder. Safe to call twice.
    ///
    /// It is killed (SIGKILL): it inherits the spawning thread's signal mask, in which the
    /// test process's threads block SIGTERM and SIGINT, and it keeps nothing worth a clean exit.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        kill(processID, SIGKILL)
        _ = try? ChildProcess.wait(for: processID)
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Starting

    private static let candidates = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"]

    private static func locateProgram() throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { String($0) + "/pgbouncer" }
        guard let found = (path + candidates).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw PgBouncerError(message: "cannot start PgBouncer: pgbouncer was not found on PATH or in /usr/sbin (apt-get install pgbouncer)")
        }
        return found
    }

    private static func writeFiles(directory: String, owner: ServerAccount?, port: Int,
                                   options: Options, serverHost: String, serverPort: Int,
                                   users: [String: String]) throws {
        // A value in the user list is double-quoted, a quote inside doubled.
        func quoted(_ text: String) -> String { "\"" + text.replacing("\"", with: "\"\"") + "\"" }
        let userList = users.keys.sorted().map { quoted($0) + " " + quoted(users[$0]!) }.joined(separator: "\n")
        var settings = [
            "listen_addr": "127.0.0.1",
            "listen_port": String(port),
            "unix_socket_dir": directory,
            "auth_type": "scram-sha-256",
            "auth_file": directory + "/userlist.txt",
            "admin_users": users.keys.sorted().joined(separator: ","),
            "pool_mode": options.poolMode.rawValue,
            "default_pool_size": String(options.poolSize),
            "min_pool_size": "0",
            "reserve_pool_size": "0",
            "max_client_conn": String(options.maximumClients),
        ]
        settings.merge(options.settings) { _, given in given }
        let ini = """
            ; Written by Cutover's test harness.
            [databases]
            * = host=\(serverHost) port=\(serverPort)

            [pgbouncer]
            \(settings.keys.sorted().map { "\($0) = \(settings[$0]!)" }.joined(separator: "\n"))

            """
        for (name, text) in [("userlist.txt", userList + "\n"), ("pgbouncer.ini", ini)] {
            let path = directory + "/" + name
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw PgBouncerError(message: "cannot write \(path)")
            }
            try owner?.handOver(path)
        }
    }

    /// A detached process that stops PgBouncer and deletes `directory` once this process has
    /// gone, unless ``stop()`` deleted the folder first.
    private static func startWatchdog(directory: String, processID: pid_t) {
        let script = """
            while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
            if [ -d "$2" ]; then
              [ "$(cat /proc/$3/comm 2>/dev/null)" = pgbouncer ] && kill -KILL "$3" 2>/dev/null
              rm -rf "$2"
            fi
            """
        // setsid --fork: out of the terminal's reach (Ctrl-C) and never a zombie of ours.
        _ = try? ChildProcess.run(["/usr/bin/setsid", "--fork", "/bin/sh", "-c", script, "cutover-pgbouncer-watchdog",
                                   String(getpid()), directory, String(processID)], output: nil)
    }

    private enum StartOutcome {
        case listening
        case exited(Int32)
        case portTaken
        case timedOut
    }

    /// Waits until the port accepts a TCP connection or the process ends, whichever is first.
    private static func awaitListening(processID: pid_t, port: Int, timeout: Duration, log: String) -> StartOutcome {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = try? ChildProcess.exitStatus(of: processID) { return .exited(status) }
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("cannot listen on 127.0.0.1:\(port)") {
                return .portTaken
            }
            if accepts(port: port) { return .listening }
            usleep(20_000)
        }
        return .timedOut
    }

    private static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func logTail(_ directory: String) -> String {
        let text = (try? String(contentsOfFile: directory + "/pgbouncer.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }
}

/// Why PgBouncer could not be started.
public struct PgBouncerError: Error, Sendable, CustomStringConvertible {
    /// One line saying what failed.
    public var message: String
    public var description: String { message }
}
