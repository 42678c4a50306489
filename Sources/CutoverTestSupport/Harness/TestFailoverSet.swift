import Foundation
import PostgresClient
import Synchronization

/// The pg_auto_failover set the failover tests share, lent to one test at a time.
///
/// Started on first use (a minute or more) and stopped when the test process exits (its
/// watchdog does it if the process dies). Tests fail over the set, so no two may use it at
/// once: ``use(_:)`` queues them. When `pg_autoctl` is not installed, ``use(_:)`` throws
/// saying which package to install, so the tests fail rather than pass unseen.
public enum TestFailoverSet {
    private static let set = Mutex<Task<AutoFailoverCluster, any Error>?>(nil)
    private static let turns = Turns()
    private static let counter = Atomic<Int>(0)
    private static let started = Mutex<AutoFailoverCluster?>(nil)

    /// Runs `body` with the set, once no other test is using it.
    public static func use<T: Sendable>(_ body: (AutoFailoverCluster) async throws -> T) async throws -> T {
        let cluster = try await shared()
        await turns.take()
        do {
            let result = try await body(cluster)
            await turns.give()
            return result
        } catch {
            await turns.give()
            throw error
        }
    }

    /// A new database on the set, reached through both nodes with
    /// `target_session_attrs=read-write`.
    public static func database(_ label: String, on cluster: AutoFailoverCluster) async throws -> TestDatabase {
        let safeLabel = String(label.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(30))
        let name = "ha_\(safeLabel)_\(counter.add(1, ordering: .relaxed).newValue)"
        try await cluster.createDatabase(name)
        return TestDatabase(name: name, connectionString: cluster.url(database: name))
    }

    /// Runs `lockingQuery` (a `SELECT … FOR UPDATE`) on `database` in a transaction that then
    /// sleeps, so that the rows stay held until the server goes down with a failover; the task
    /// ends with the error of the lost connection. Its session's `application_name` is
    /// `failover-row-holder`, and it waits in `SELECT pg_sleep` once it holds the rows.
    public static func holdUntilFailover(_ lockingQuery: String, on database: TestDatabase) -> Task<Void, any Error> {
        Task {
            try await runOnDedicatedThread(named: "cutover-failover-holder") {
                let connection = try database.connect(applicationName: "failover-row-holder")
                try connection.execute(unsafeSQL: "BEGIN")
                try connection.execute(unsafeSQL: lockingQuery)
                try connection.query("SELECT pg_sleep(600)")
            }
        }
    }

    private static func shared() async throws -> AutoFailoverCluster {
        let task = set.withLock { task in
            if let task { return task }
            let starting = Task {
                let cluster = try await AutoFailoverCluster.start()
                started.withLock { $0 = cluster }
                // For the record: how long a set takes to start on this machine.
                FileHandle.standardError.write(Data("pg_auto_failover set started in \(cluster.startDuration) in \(cluster.directory)\n".utf8))
                atexit { TestFailoverSet.stop() }
                return cluster
            }
            task = starting
            return starting
        }
        return try await task.value
    }

    private static func stop() {
        started.withLock { $0 }?.stop()
    }

    /// First come, first served turns at the set.
    private actor Turns {
        private var isTaken = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func take() async {
            guard isTaken else {
                isTaken = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty { isTaken = false } else { waiting.removeFirst().resume() }
        }
    }
}
