import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

@Suite("Runner mechanics")
struct RunnerMechanicsTests {
    @Test func aSecondRunnerIsRefusedAtOnceNamingTheHolder() async throws {
        let database = try await TestPostgres.database("runner_lock")
        let (error, released) = try await onThread { () -> (RunnerLockError?, Bool) in
            let first = try database.connect(applicationName: "first-runner")
            let second = try database.connect(applicationName: "second-runner")
            try RunnerLock.acquire(on: first)
            var refusal: RunnerLockError?
            do { try RunnerLock.acquire(on: second) } catch let error as RunnerLockError { refusal = error }
            try RunnerLock.release(on: first)
            try RunnerLock.acquire(on: second)
            return (refusal, true)
        }
        guard case .held(let holder?)? = error else { Issue.record("no refusal naming a holder: \(String(describing: error))"); return }
        #expect(holder.applicationName == "first-runner")
        #expect(error?.description.hasPrefix("another phase runner holds the lock: pid \(holder.pid) (application_name first-runner) since ") == true)
        #expect(released)
    }

    @Test func aDeadRunnersLockIsReleasedWithItsSession() async throws {
        let database = try await TestPostgres.database("runner_lock_dead")
        try await onThread {
            let first = try database.connect(applicationName: "doomed-runner")
            try RunnerLock.acquire(on: first)
            let admin = try database.connect()
            try admin.query("SELECT pg_terminate_backend(\(first.backendPID), \(5000))")
            try RunnerLock.acquire(on: admin)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func ddlWaitsOutAnExclusiveLockWithoutMakingOthersQueue() async throws {
        let database = try await TestPostgres.database("runner_ddl_retry")
        let setup = try database.connect()
        try setup.execute(unsafeSQL: "CREATE TABLE busy (id int PRIMARY KEY); INSERT INTO busy VALUES (1)")
        let retries = Mutex<[Duration]>([])
        let runner = SQLFileRunner(policy: .init(lockTimeout: .milliseconds(200), initialBackoff: .milliseconds(50),
                                                 maximumBackoff: .milliseconds(400)),
                                   onRetry: { _, delay, _ in retries.withLock { $0.append(delay) } })
        // A long transaction reads the table for at least 2 s. Readers are compatible with it; the DDL is
        // not, and while it waits for its lock every reader queues behind the DDL: the lock
        // timeout is what keeps that wait short.
        let holder = try database.connect(applicationName: "long-reader")
        try holder.execute(unsafeSQL: "BEGIN; SELECT count(*) FROM busy")
        // It commits after 2 s, and not before the DDL has timed out at least once, however
        // slowly a loaded machine connects the runner.
        let release = Task {
            try await Task.sleep(for: .seconds(2))
            while retries.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
            try holder.execute(unsafeSQL: "COMMIT")
        }
        let readerWaits = Task {
            try await onThread { () -> Duration in
                let reader = try database.connect(applicationName: "reader")
                var longest = Duration.zero
                let end = ContinuousClock.now + .milliseconds(2500)
                while ContinuousClock.now < end {
                    let started = ContinuousClock.now
                    _ = try reader.query("SELECT count(*) FROM busy")
                    longest = max(longest, ContinuousClock.now - started)
                    Thread.sleep(forTimeInterval: 0.02)
                }
                return longest
            }
        }
        let attempts = try await onThread {
            let connection = try database.connect(applicationName: "ddl-runner")
            return try runner.runInTransaction("ALTER TABLE busy ADD COLUMN note text", on: connection)
        }
        try await release.value
        #expect(attempts > 1)
        #expect(retries.withLock { $0.count } == attempts - 1)
        // At most one lock timeout (200 ms) plus scheduling; never the holder's 2 s.
        #expect(try await readerWaits.value < .milliseconds(1900))
        let columns = try setup.query("SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'busy'")[0].decode(Int.self, "n")
        #expect(columns == 2)
    }

    @Test func ddlGivesUpAfterItsAttemptsWithTheLockError() async throws {
        let database = try await TestPostgres.database("runner_ddl_giveup")
        let setup = try database.connect()
        try setup.execute(unsafeSQL: "CREATE TABLE stuck (id int)")
        let holder = try database.connect()
        try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE stuck IN ACCESS EXCLUSIVE MODE")
        let runner = SQLFileRunner(policy: .init(lockTimeout: .milliseconds(50), maximumAttempts: 3,
                                                 initialBackoff: .milliseconds(10), maximumBackoff: .milliseconds(20)))
        let failure = try await onThread { () -> PostgresError? in
            let connection = try database.connect()
            do { try runner.runInTransaction("ALTER TABLE stuck ADD COLUMN x int", on: connection); return nil } catch let error as PostgresError { return error }
        }
        #expect(failure?.sqlState == .lockNotAvailable)
        try holder.execute(unsafeSQL: "ROLLBACK")
    }

    @Test func anInvalidIndexLeftByAnInterruptedBuildIsRebuilt() async throws {
        let database = try await TestPostgres.database("runner_invalid_index")
        let connection = try database.connect()
        try connection.execute(unsafeSQL: """
            CREATE TABLE items (id int PRIMARY KEY, code int);
            INSERT INTO items SELECT n, n % 3 FROM generate_series(1, 30) n;
            """)
        // A unique index over duplicate values fails and is left INVALID, as an interrupted
        // concurrent build would leave it.
        _ = try? connection.execute(unsafeSQL: "CREATE UNIQUE INDEX CONCURRENTLY items_code ON items (code)")
        let runner = SQLFileRunner()
        #expect(try runner.invalidIndexes(on: "items", connection: connection) == ["items_code"])
        try runner.runOutsideTransaction("CREATE INDEX CONCURRENTLY IF NOT EXISTS items_code ON items (code)", table: "items",
                                         on: connection)
        #expect(try runner.invalidIndexes(on: "items", connection: connection).isEmpty)
        let valid = try connection.query("SELECT indisvalid FROM pg_index WHERE indexrelid = 'items_code'::regclass")[0].decode(Bool.self, at: 0)
        #expect(valid)
    }
}
