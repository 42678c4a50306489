import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real high-availability PostgreSQL set for failover tests: a pg_auto_failover monitor and
/// two data nodes, a primary and a synchronous standby, on loopback in a private folder.
///
/// ``start(options:)`` runs Debian's `pg_autoctl` (package `postgresql-15-auto-failover`) as
/// the `postgres` user when this process is root, since PostgreSQL refuses root. Connections
/// from loopback are trusted and unencrypted. The standby is a replication-quorum member, so
/// the primary's `synchronous_standby_names` names it and a commit is acknowledged only once
/// the standby has flushed it; ``start(options:)`` returns only when that holds.
/// ``performFailover(timeout:)`` asks the monitor for a failover and waits until the other node
/// is primary with the old one following it again. ``stop()`` stops every process and deletes
/// the folder; a watchdog process does the same if this process dies first.
///
/// ```swift
/// let set = try await AutoFailoverCluster.start()
/// defer { set.stop() }
/// try await set.createDatabase("app")
/// let url = set.url(database: "app")   // both nodes, target_session_attrs=read-write
/// let promoted = try await set.performFailover()
/// ```
public final class AutoFailoverCluster: Sendable {
    /// How to start the set.
    public struct Options: Sendable {
        /// How long the whole set may take to start: the standby's base backup waits for a
        /// checkpoint, which is slow on a loaded machine.
        public var startTimeout: Duration

        /// The defaults: ten minutes to start.
        public init(startTimeout: Duration = .seconds(600)) {
            self.startTimeout = startTimeout
        }
    }

    /// One data node of the set.
    public struct Node: Sendable, Equatable, CustomStringConvertible {
        /// Its pg_auto_failover name (`node1`, `node2`).
        public let name: String
        /// The loopback TCP port its server listens on.
        public let port: Int
        /// Its data folder.
        public let dataDirectory: String

        public var description: String { "\(name) (127.0.0.1:\(port))" }
    }

    /// A node as the monitor sees it.
    public struct NodeState: Sendable, Equatable, CustomStringConvertible {
        /// The node's name.
        public let name: String
        /// The state the node last reported (`primary`, `secondary`, `draining`, …).
        public let reported: String
        /// The state the monitor assigned it.
        public let goal: String

        public var description: String { "\(name) \(reported)→\(goal)" }
    }

    /// The temporary folder holding every node's data, configuration and log.
    public let directory: String
    /// The monitor's loopback port.
    public let monitorPort: Int
    /// The two data nodes, in the order they were created (the first starts as primary).
    public let nodes: [Node]
    /// How long ``start(options:)`` took, for the record.
    public var startDuration: Duration { startedIn.withLock { $0 } }
    private let startedIn = Mutex<Duration>(.zero)
    let tools: AutoFailoverTools
    private let services = Mutex<[pid_t]>([])
    private let isStopped = Atomic<Bool>(false)

    private init(directory: String, monitorPort: Int, nodes: [Node], tools: AutoFailoverTools) {
        self.directory = directory
        self.monitorPort = monitorPort
        self.nodes = nodes
        self.tools = tools
    }

    deinit { stop() }

    /// The database pg_autoctl creates on the primary.
    public static let defaultDatabase = "cutover"

    /// A multi-host `postgresql://` URI for `database` naming both nodes, with
    /// `target_session_attrs=read-write`, so that libpq connects to whichever is primary.
    public func url(database: String = AutoFailoverCluster.defaultDatabase) -> String {
        let hosts = nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
        return "postgresql://postgres@\(hosts)/\(database)?target_session_attrs=read-write&sslmode=disable"
    }

    /// A URI for `database` on one node only, whatever its role.
    public func url(database: String = AutoFailoverCluster.defaultDatabase, node: Node) -> String {
        "postgresql://postgres@127.0.0.1:\(node.port)/\(database)?sslmode=disable"
    }

    /// Creates `database` on the primary and waits, up to `timeout`, until the standby has
    /// replayed it: libpq tries no further host after one that refuses a database it lacks.
    public func createDatabase(_ database: String, timeout: Duration = .seconds(60)) async throws {
        try await runOnDedicatedThread(named: "cutover-failover-admin") {
            let connection = try PostgresConnection(configuration: .init(connectionString: self.url(), connectTimeout: .seconds(10)))
            try connection.execute(unsafeSQL: "CREATE DATABASE " + connection.quoteIdentifier(database))
            try self.waitFor("\(database) to reach every node", deadline: ContinuousClock.now + timeout) {
                try self.nodes.allSatisfy { node in
                    let each = try PostgresConnection(configuration: .init(connectionString: self.url(node: node), connectTimeout: .seconds(5)))
                    return try !each.query("SELECT 1 FROM pg_database WHERE datname = \(database)").isEmpty
                }
            }
        }
    }

    /// Starts a new set without blocking Swift's cooperative threads.
    public static func start(options: Options = Options()) async throws -> AutoFailoverCluster {
        try await runOnDedicatedThread(named: "cutover-failover-start") { try startBlocking(options: options) }
    }

    /// Starts a new set, blocking the calling thread for the minute or more it takes.
    public static func startBlocking(options: Options = Options()) throws -> AutoFailoverCluster {
        let clock = ContinuousClock()
        let began = clock.now
        let tools = try AutoFailoverTools.locate()
        let directory = try tools.makePrivateDirectory()
        tools.startWatchdog(directory: directory)
        let cluster: AutoFailoverCluster
        do {
            let nodes = try (1...2).map { Node(name: "node\($0)", port: try EphemeralCluster.freeLoopbackPort(),
                                               dataDirectory: directory + "/node\($0)") }
            cluster = AutoFailoverCluster(directory: directory, monitorPort: try EphemeralCluster.freeLoopbackPort(),
                                          nodes: nodes, tools: tools)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        do {
            try cluster.createAndRun(deadline: began + options.startTimeout)
        } catch {
            cluster.stop()
            throw error
        }
        cluster.startedIn.withLock { $0 = clock.now - began }
        return cluster
    }

    /// Creates the monitor, the primary and the standby, and waits for synchronous replication.
    private func createAndRun(deadline: ContinuousClock.Instant) throws {
        let monitorData = directory + "/monitor"
        try tools.run(directory: directory, ["create", "monitor", "--pgdata", monitorData, "--pgport", String(monitorPort),
                       "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--pgctl", tools.pgCtl],
                      log: directory + "/monitor-create.log", what: "pg_autoctl create monitor")
        // The tests ask for every failover themselves. A health check missed on a loaded machine
        // would have the monitor take the standby for gone and let the primary acknowledge
        // commits alone (wait_primary), which a failover right after then loses by design: the
        // monitor gives a node a minute and six tries before it judges it.
        try tools.appendSettings(dataDirectory: monitorData, extra: """
            pgautofailover.health_check_max_retries = 6
            pgautofailover.health_check_timeout = 10000
            pgautofailover.node_considered_unhealthy_timeout = 60000
            """)
        try runService(["run", "--pgdata", monitorData], log: directory + "/monitor.log")
        try waitFor("the monitor to accept connections", deadline: deadline) { try states() != nil }

        let primary = nodes[0]
        try tools.run(directory: directory, createNode(primary), log: directory + "/\(primary.name)-create.log", what: "pg_autoctl create postgres")
        // The standby's base backup copies these settings along with the data.
        try tools.appendSettings(dataDirectory: primary.dataDirectory)
        try runService(["run", "--pgdata", primary.dataDirectory], log: directory + "/\(primary.name).log")
        try waitFor("\(primary.name) to run alone", deadline: deadline) {
            try states()?.contains { $0.name == primary.name && $0.reported == "single" && $0.goal == "single" } == true
        }
        try runService(createNode(nodes[1]) + ["--run"], log: directory + "/\(nodes[1].name).log")
        _ = try waitUntilReplicating(deadline: deadline)
    }

    private func createNode(_ node: Node) -> [String] {
        ["create", "postgres", "--pgdata", node.dataDirectory, "--pgport", String(node.port), "--listen", "127.0.0.1",
         "--hostname", "127.0.0.1", "--name", node.name, "--dbname", Self.defaultDatabase, "--auth", "trust", "--no-ssl",
         "--pgctl", tools.pgCtl, "--monitor", "postgresql://autoctl_node@127.0.0.1:\(monitorPort)/pg_auto_failover?sslmode=disable"]
    }

    private func runService(_ arguments: [String], log: String) throws {
        let pid = try tools.spawn(arguments, directory: directory, log: log)
        services.withLock { $0.append(pid) }
    }

    /// Every data node as the monitor sees it, or nil while the monitor cannot answer.
    public func states() throws -> [NodeState]? {
        guard let connection = try monitorConnection() else { return nil }
        let rows: PostgresRows
        do {
            rows = try connection.query("SELECT nodename, reportedstate::text AS reported, goalstate::text AS goal FROM pgautofailover.node ORDER BY nodeid")
        } catch let error as PostgresError where error.sqlState == .undefinedTable {
            return nil
        }
        return try rows.map { NodeState(name: try $0.decode(String.self, "nodename"), reported: try $0.decode(String.self, "reported"),
                                        goal: try $0.decode(String.self, "goal")) }
    }

    /// The monitor's events since `since` (its clock), oldest first, one line each (time,
    /// node, reported and goal state, description): what a failed failover test prints to say
    /// what pg_auto_failover did; empty while the monitor cannot answer.
    public func events(since: String? = nil) throws -> [String] {
        guard let connection = try monitorConnection() else { return [] }
        return try connection.query("""
            SELECT to_char(eventtime, 'HH24:MI:SS.MS') || ' ' || nodename || ' ' || reportedstate::text || ' -> '
                   || goalstate::text || ': ' || description AS line
              FROM pgautofailover.event
             WHERE eventtime >= coalesce(CAST(\(since) AS timestamptz), '-infinity')
             ORDER BY eventid
            """).map { try $0.decode(String.self, "line") }
    }

    /// The monitor's clock now, for ``events(since:)``.
    public func monitorNow() throws -> String? {
        guard let connection = try monitorConnection() else { return nil }
        return try connection.query("SELECT now()::text AS now")[0].decode(String.self, "now")
    }

    /// A connection to the monitor's database, or nil while the monitor cannot answer (it is
    /// starting or stopping); any other failure is thrown.
    private func monitorConnection() throws -> PostgresConnection? {
        let url = "postgresql://postgres@127.0.0.1:\(monitorPort)/pg_auto_failover?sslmode=disable"
        do {
            return try PostgresConnection(configuration: .init(connectionString: url, connectTimeout: .seconds(5)))
        } catch let error as PostgresError where error.isConnectionBroken || error.sqlState?.errorClass == .operatorIntervention {
            return nil
        }
    }

    /// The node the monitor holds primary now (reported and assigned), if one is.
    public func primary() throws -> Node? {
        guard let name = try states()?.first(where: { $0.reported == "primary" && $0.goal == "primary" })?.name else { return nil }
        return nodes.first { $0.name == name }
    }

    /// Asks the monitor for a failover and waits, up to `timeout`, until the other node is
    /// primary, the old one follows it, and commits wait for it again; returns the new primary.
    @discardableResult
    public func performFailover(timeout: Duration = .seconds(180)) async throws -> Node {
        try await runOnDedicatedThread(named: "cutover-failover") {
            let deadline = ContinuousClock.now + timeout
            // Only a standby that is streaming and synchronous holds every acknowledged commit:
            // with one standby, pg_auto_failover lets the primary acknowledge commits alone while
            // the standby is away (wait_primary), and a failover then would lose them by design.
            let old = try self.waitUntilReplicating(deadline: deadline)
            try self.tools.run(directory: self.directory, ["perform", "failover", "--pgdata", self.directory + "/monitor",
                                "--wait", String(timeout.components.seconds)],
                               log: self.directory + "/failover.log", what: "pg_autoctl perform failover")
            let new = try self.waitUntilReplicating(deadline: deadline)
            guard new != old else {
                throw AutoFailoverClusterError(message: "pg_autoctl perform failover finished but \(new) is still primary")
            }
            return new
        }
    }

    /// Waits until one node is primary and the other secondary (reported and assigned), and the
    /// primary's commits wait for the standby; returns the primary.
    @discardableResult
    public func waitUntilReplicating(timeout: Duration = .seconds(180)) async throws -> Node {
        try await runOnDedicatedThread(named: "cutover-failover-wait") {
            try self.waitUntilReplicating(deadline: ContinuousClock.now + timeout)
        }
    }

    private func waitUntilReplicating(deadline: ContinuousClock.Instant) throws -> Node {
        var found: Node?
        try waitFor("a primary with a synchronous standby", deadline: deadline) {
            guard let states = try states(), states.count == 2,
                  states.contains(where: { $0.reported == "secondary" && $0.goal == "secondary" }),
                  let primary = try primary() else { return false }
            guard try isSynchronous(primary) else { return false }
            found = primary
            return true
        }
        // Synchronous from now on is not enough: commits the primary acknowledged alone while
        // the standby was away (wait_primary, which a loaded machine's missed health checks
        // bring about) are on the standby only once it has flushed the WAL written so far.
        let current = found!
        var target: String?
        try waitFor("the standby to hold every commit the primary acknowledged", deadline: deadline) {
            guard let connection = try connectIfUp(current) else { return false }
            if target == nil { target = try connection.query("SELECT pg_current_wal_lsn()::text AS lsn")[0].decode(String.self, "lsn") }
            return try connection.query("""
                SELECT EXISTS (SELECT 1 FROM pg_stat_replication
                                WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum') AND flush_lsn >= \(target!)::pg_lsn)
                       AS caught_up
                """)[0].decode(Bool.self, "caught_up")
        }
        return current
    }

    /// Whether `node` is a primary whose commits wait for a streaming quorum standby.
    private func isSynchronous(_ node: Node) throws -> Bool {
        guard let connection = try connectIfUp(node) else { return false }
        let row = try connection.query("""
            SELECT NOT pg_is_in_recovery() AND current_setting('synchronous_standby_names') <> ''
                   AND current_setting('synchronous_commit') IN ('on', 'remote_apply', 'remote_write')
                   AND EXISTS (SELECT 1 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum'))
                   AS synchronous
            """)[0]
        return try row.decode(Bool.self, "synchronous")
    }

    /// A connection to `node`, or nil while it does not answer (it is restarting or being
    /// promoted); any other failure is thrown.
    private func connectIfUp(_ node: Node) throws -> PostgresConnection? {
        do {
            return try PostgresConnection(configuration: .init(connectionString: url(node: node), connectTimeout: .seconds(5)))
        } catch let error as PostgresError where error.isConnectionBroken {
            return nil
        }
    }

    /// Polls `condition` every 100 ms until it holds, or throws naming `what` and the
    /// monitor's last view at `deadline`.
    private func waitFor(_ what: String, deadline: ContinuousClock.Instant, _ condition: () throws -> Bool) throws {
        while true {
            if try condition() { return }
            guard ContinuousClock.now < deadline else {
                let view = ((try? states()) ?? nil).map { $0.map(\.description).joined(separator: ", ") } ?? "the monitor does not answer"
                throw AutoFailoverClusterError(message: "timed out waiting for \(what) (\(view)); logs in \(directory)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Stops every node and the monitor and deletes the folder. Safe to call twice.
    public func stop() {
        guard !isStopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        for data in nodes.map(\.dataDirectory) + [directory + "/monitor"] where FileManager.default.fileExists(atPath: data) {
            try? tools.run(directory: directory, ["stop", "--pgdata", data, "--fast"], log: nil, what: "pg_autoctl stop")
        }
        tools.reap(services.withLock { $0 }, within: .seconds(60))
        tools.stopServers(directory: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Why a pg_auto_failover set could not be started or driven.
public struct AutoFailoverClusterError: Error, Sendable, CustomStringConvertible {
    /// One line saying what failed and what to do.
    public var message: String
    public var description: String { message }
}
