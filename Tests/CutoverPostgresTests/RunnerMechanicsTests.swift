import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

@Suite("Runner mechanics")
struct RunnerMechanicsTests {
    @Test func aSecondRunnerIsRefusedAtOnceNamingTheHolderAndThePlan() async throws {
        let database = try await TestPostgres.database("runner_lock")
        let (error, released) = try await onThread { () -> (RunnerLockError?, Bool) in
            let first = try database.connect(applicationName: "first-runner")
            let second = try database.connect(applicationName: "second-runner")
            try ControlSchema.install(on: first)
            try RunnerLock.acquire(plan: "drafts", on: first)
            var refusal: RunnerLockError?
            do { try RunnerLock.acquire(plan: "drafts", on: second) } catch let error as RunnerLockError { refusal = error }
            try RunnerLock.release(plan: "drafts", on: first)
            try RunnerLock.acquire(plan: "drafts", on: second)
            return (refusal, true)
        }
        guard case .held(let holder?, let plan)? = error else {
            Issue.record("no refusal naming a holder: \(String(describing: error))")
            return
        }
        #expect(plan == "drafts")
        #expect(holder.applicationName == "first-runner")
        #expect(error?.description.hasPrefix(
            "another phase runner is working on plan drafts: pid \(holder.pid) (application_name first-runner, role ") == true)
        #expect(released)
    }

    @Test func eachPlanHasItsOwnLease() async throws {
        let database = try await TestPostgres.database("runner_lock_plans")
        try await onThread {
            let first = try database.connect(applicationName: "drafts-runner")
            let second = try database.connect(applicationName: "orders-runner")
            try ControlSchema.install(on: first)
            try RunnerLock.acquire(plan: "drafts", on: first)
            try RunnerLock.acquire(plan: "orders", on: second)
            #expect(try RunnerLock.holder(plan: "drafts", on: second)?.pid == first.backendPID)
            #expect(try RunnerLock.holder(plan: "orders", on: first)?.pid == second.backendPID)
        }
    }

    @Test func aDeadRunnersLeaseIsFreedWithItsSession() async throws {
        let database = try await TestPostgres.database("runner_lock_dead")
        try await onThread {
            let first = try database.connect(applicationName: "doomed-runner")
            try ControlSchema.install(on: first)
            try RunnerLock.acquire(plan: "drafts", on: first)
            let admin = try database.connect()
            try admin.query("SELECT pg_terminate_backend(\(first.backendPID), \(5000))")
            #expect(try RunnerLock.holder(plan: "drafts", on: admin) == nil)
            try RunnerLock.acquire(plan: "drafts", on: admin)
            #expect(try RunnerLock.holder(plan: "drafts", on: admin)?.pid == admin.backendPID)
        }
    }

    @Test func runnersRacingForOnePlanNeverBothHoldIt() async throws {
        let database = try await TestPostgres.database("runner_lock_race")
        try await onThread { try ControlSchema.install(on: try database.connect()) }
        let racers = 4
        for round in 0..<10 {
            // Every racer connects, all try at once, and every connection stays open until all
            // have tried: a lease is never freed by its holder's end during the race.
            let ready = DispatchSemaphore(value: 0), start = DispatchSemaphore(value: 0)
            let tried = DispatchSemaphore(value: 0), close = DispatchSemaphore(value: 0)
            let tasks = (0..<racers).map { index in
                Task { () -> Bool in
                    try await onThread { () -> Bool in
                        let connection = try database.connect(applicationName: "racer-\(round)-\(index)")
                        ready.signal()
                        start.wait()
                        var won = false
                        do {
                            try RunnerLock.acquire(plan: "race-\(round)", on: connection)
                            won = true
                        } catch is RunnerLockError {}
                        tried.signal()
                        close.wait()
                        return won
                    }
                }
            }
            try await onThread {
                for _ in 0..<racers { ready.wait() }
                for _ in 0..<racers { start.signal() }
                for _ in 0..<racers { tried.wait() }
            }
            for _ in 0..<racers { close.signal() }
            var winners = 0
            for task in tasks where try await task.value { winners += 1 }
            #expect(winners == 1, "round \(round)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func ddlWaitsOutAnExclusiveLockWithoutMakingOthersQueue() async throws {
        let database = try await TestPostgres.database("runner_ddl_retry")
        let setup = try database.connect()
        try setup.execute(unsafeSQL: "CREATE TABLE busy (id int PRIMARY KEY); INSERT INTO busy VALUES (1)")
        let retries = Mutex<[Duration]>([])
        // Attempts enough to outlast the holder however slowly a loaded machine gets the reads
        // through; the test's time limit bounds it.
        let runner = SQLFileRunner(policy: .init(lockTimeout: .milliseconds(200), maximumAttempts: 100_000,
                                                 initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(400)),
                                   onRetry: { _, delay, _ in retries.withLock { $0.append(delay) } })
        // A long transaction reads the table. Readers are compatible with it; the DDL is not,
        // and while it waits for its lock every reader queues behind the DDL: the lock timeout
        // is what ends that wait, so readers get through between the DDL's attempts.
        let holder = try database.connect(applicationName: "long-reader")
        try holder.execute(unsafeSQL: "BEGIN; SELECT count(*) FROM busy")
        // Reads finished after the DDL's first timeout and while the holder still held its
        // lock; the holder commits once a few have, or after a bound that turns a reader stuck
        // behind the DDL into a failure rather than a hang.
        let tally = ReadTally()
        let wanted = 3
        let release = Task {
            _ = try await eventually { tally.state.withLock { $0.readsWhileHeld } >= wanted }
            tally.state.withLock { $0.isReleasing = true }
            try holder.execute(unsafeSQL: "COMMIT")
        }
        let reader = Task {
            try await onThread {
                let reader = try database.connect(applicationName: "reader")
                while !tally.state.withLock({ $0.isReleasing }) {
                    let afterATimeout = !retries.withLock { $0.isEmpty }
                    _ = try reader.query("SELECT count(*) FROM busy")
                    // Counted only if the holder had not begun to commit when the read ended.
                    tally.state.withLock { if afterATimeout && !$0.isReleasing { $0.readsWhileHeld += 1 } }
                }
            }
        }
        let attempts = try await onThread {
            let connection = try database.connect(applicationName: "ddl-runner")
            return try runner.runInTransaction("ALTER TABLE busy ADD COLUMN note text", on: connection)
        }
        try await release.value
        try await reader.value
        #expect(attempts > 1)
        #expect(retries.withLock { $0.count } == attempts - 1)
        // Readers were not held behind the DDL for as long as the holder held its lock.
        #expect(tally.state.withLock { $0.readsWhileHeld } >= wanted)
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

/// Reads that finished while a lock holder still held its lock, and whether it has begun to let go.
private final class ReadTally: Sendable {
    let state = Mutex((readsWhileHeld: 0, isReleasing: false))
}
