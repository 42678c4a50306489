import CutoverTestSupport
import Foundation
@testable import PostgresClient
import Synchronization
import Testing

@Suite("Connection pool")
struct PoolTests {
    static let database = Task { try await TestPostgres.database("pool") }

    @Test(.timeLimit(.minutes(3)))
    func sixtyFourTasksOverEightConnectionsAllFinish() async throws {
        let database = try await Self.database.value
        // What matters here is that all finish and never more than 8 connect; a generous acquire
        // timeout keeps a loaded machine (slow connects) from failing the test for the wrong reason.
        let pool = PostgresPool(configuration: database.configuration(applicationName: "pool-64"), maximumConnections: 8,
                                acquireTimeout: .seconds(120))
        let observer = PostgresPool(configuration: database.configuration(applicationName: "pool-observer"), maximumConnections: 1)
        let mostSeen = Highest()
        let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    try await pool.withConnection { connection in
                        let seen = try connection.query("""
                            SELECT (SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pool-64') AS n, pg_sleep(0.02)
                            """)[0].decode(Int.self, "n")
                        mostSeen.record(seen)
                        return connection.backendPID
                    }
                }
            }
            var pids: [Int32] = []
            for try await pid in group { pids.append(pid) }
            return pids
        }
        #expect(pids.count == 64)
        #expect(Set(pids).count <= 8)
        #expect(mostSeen.value <= 8)
        #expect(pool.statistics.peak <= 8)
        #expect(pool.statistics.opened <= 8)
        await pool.shutdown()
        // The client closes at once; the server's backends take a moment to exit.
        let isGone = try await eventually(pause: .milliseconds(100)) {
            try await observer.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'pool-64'")[0].decode(Int.self, "n")
            } == 0
        }
        #expect(isGone)
        #expect(pool.statistics.open == 0)
        await observer.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aTerminatedConnectionIsReplacedBeforeTheNextCaller() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(applicationName: "pool-terminate"), maximumConnections: 1)
        let first = try await pool.withConnection { $0.backendPID }
        #expect(try await database.terminateBackend(first))
        let (second, answer) = try await pool.withConnection { connection in
            (connection.backendPID, try connection.query("SELECT \(41) + 1 AS n")[0].decode(Int.self, "n"))
        }
        #expect(second != first)
        #expect(answer == 42)
        #expect(pool.statistics.opened == 2)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aCallerWaitsNoLongerThanTheAcquireTimeout() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1,
                                acquireTimeout: .milliseconds(300))
        // The holder keeps the only connection until the caller has given up: a caller that
        // waited for it instead would wait until the test's time limit.
        let holder = try await ConnectionHolder.occupy(pool)
        await #expect {
            try await pool.withConnection { _ in 1 }
        } throws: { error in
            (error as? PostgresError)?.code == .poolTimeout
        }
        try await holder.leave()
        #expect(try await pool.withConnection { _ in 7 } == 7)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aCancelledWaiterLeavesAtOnce() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        // The holder keeps the only connection until the waiter's fate is known, however slowly
        // a loaded machine runs the tasks.
        let holder = try await ConnectionHolder.occupy(pool)
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        #expect(try await eventually(pause: .milliseconds(5)) { pool.waitingCallers == 1 }, "the waiter never began to wait")
        waiter.cancel()
        let result = await waiter.result
        try await holder.leave()
        #expect(throws: CancellationError.self) { try result.get() }
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func shutdownRefusesNewWorkAndClosesEveryConnection() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(applicationName: "pool-shutdown"), maximumConnections: 2)
        _ = try await pool.withConnection { $0.backendPID }
        await pool.shutdown()
        #expect(pool.statistics.open == 0)
        await #expect {
            try await pool.withConnection { _ in 1 }
        } throws: { error in
            (error as? PostgresError)?.code == .poolClosed
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aTransactionLeftOpenIsRolledBackBeforeTheConnectionIsReused() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        try await pool.withConnection { try $0.execute(unsafeSQL: "CREATE TABLE pool_left_open (id int)") }
        try await pool.withConnection { connection in
            try connection.execute(unsafeSQL: "BEGIN")
            try connection.query("INSERT INTO pool_left_open VALUES (\(1))")
        }
        let (state, count) = try await pool.withConnection { connection in
            (connection.transactionState, try connection.query("SELECT count(*) AS n FROM pool_left_open")[0].decode(Int.self, "n"))
        }
        #expect(state == .idle)
        #expect(count == 0)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func poolTransactionsCommit() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 2)
        try await pool.withConnection { try $0.execute(unsafeSQL: "CREATE TABLE pool_tx (id int)") }
        try await pool.withTransaction { try $0.query("INSERT INTO pool_tx VALUES (\(1))") }
        let count = try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM pool_tx")[0].decode(Int.self, "n") }
        #expect(count == 1)
        await pool.shutdown()
    }
}

/// The highest number recorded, from any task.
final class Highest: Sendable {
    private let highest = Mutex(0)
    func record(_ candidate: Int) { highest.withLock { $0 = max($0, candidate) } }
    var value: Int { highest.withLock { $0 } }
}

/// A task that holds a pool's connection, on the connection's thread, until told to leave.
private struct ConnectionHolder {
    private let release: Gate
    private let task: Task<Void, any Error>

    /// Returns once the holder has the connection.
    static func occupy(_ pool: PostgresPool) async throws -> ConnectionHolder {
        let holding = Gate()
        let release = Gate()
        let task = Task {
            try await pool.withConnection { _ in
                holding.open()
                while !release.isOpen { usleep(1000) }
            }
        }
        while !holding.isOpen { try await Task.sleep(for: .milliseconds(10)) }
        return ConnectionHolder(release: release, task: task)
    }

    private init(release: Gate, task: Task<Void, any Error>) {
        self.release = release
        self.task = task
    }

    /// Gives the connection back and waits until the holder is done.
    func leave() async throws {
        release.open()
        try await task.value
    }
}

/// A flag that one task opens and others read.
private final class Gate: Sendable {
    private let state = Atomic<Bool>(false)
    func open() { state.store(true, ordering: .releasing) }
    var isOpen: Bool { state.load(ordering: .acquiring) }
}
