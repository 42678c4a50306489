import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The phase runner in front of a real PgBouncer (Debian's 1.18): it refuses transaction
/// pooling, never admits two runners through it, and leaves no setting on a pooled server
/// connection.
@Suite("Runner through PgBouncer", .timeLimit(.minutes(3)))
struct RunnerPoolerTests {
    /// A database with the control schema and the drafts table, made directly, and PgBouncer in front of it.
    private func prepared(_ label: String, _ options: PgBouncerProcess.Options) async throws
        -> (database: TestDatabase, pooler: PgBouncerProcess, pooled: String) {
        let database = try await TestPostgres.database(label)
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try PhaseRunner(connection: connection, source: PlanSource.builtIn()).initialize()
        }
        let (pooler, pooled) = try await database.throughPgBouncer(options)
        return (database, pooler, pooled)
    }

    @Test func twoRunnersThroughATransactionPoolerAreBothRefusedAndChangeNothing() async throws {
        let (database, pooler, pooled) = try await prepared("runner_pooled_refused", .init(poolMode: .transaction, poolSize: 2))
        defer { pooler.stop() }
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<2 {
                group.addTask {
                    try await onThread { () -> String in
                        let runner = PhaseRunner(connection: try PostgresConnection(configuration: .init(connectionString: pooled,
                                                                                                         applicationName: "pooled-runner-\(index)")),
                                                 source: try PlanSource.builtIn())
                        do {
                            _ = try runner.run(.expand)
                            return "admitted"
                        } catch let refusal as PoolerRefusal {
                            return refusal.description
                        }
                    }
                }
            }
            var all: [String] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 2)
        for outcome in outcomes {
            #expect(outcome.hasPrefix("the runner needs a direct or session-pooled connection, and this one goes through a transaction pooler ("),
                    "\(outcome)")
        }
        let (phase, leases) = try await onThread { () -> (String, Int) in
            let connection = try database.connect()
            return (try connection.query("SELECT phase FROM cutover.migration_state")[0].decode(String.self, "phase"),
                    try connection.query("SELECT count(*) AS n FROM cutover.runner_lease")[0].decode(Int.self, "n"))
        }
        #expect(phase == "baseline")
        #expect(leases == 0)
    }

    @Test func theLeaseAdmitsOneRunnerEvenWhereDetectionIsBypassed() async throws {
        // One server connection: the pooler hands the same server session to both clients.
        let (_, pooler, pooled) = try await prepared("runner_pooled_lease", .init(poolMode: .transaction, poolSize: 1))
        defer { pooler.stop() }
        let admitted = try await onThread { () -> [Bool] in
            let first = try PostgresConnection(configuration: .init(connectionString: pooled))
            let second = try PostgresConnection(configuration: .init(connectionString: pooled))
            var admitted: [Bool] = []
            for connection in [first, second] {
                do {
                    try RunnerLock.acquire(plan: "drafts", idleHolderGrace: .zero, on: connection)
                    admitted.append(true)
                } catch is RunnerLockError {
                    admitted.append(false)
                }
            }
            // The holder's release works on whichever server session it lands; then the other gets in.
            try RunnerLock.release(plan: "drafts", on: first)
            try RunnerLock.acquire(plan: "drafts", idleHolderGrace: .zero, on: second)
            admitted.append(true)
            return admitted
        }
        #expect(admitted == [true, false, true])
    }

    @Test func aSessionPoolerIsAdmittedAndTheStepRuns() async throws {
        // The runner, its checks and a file outside a transaction each hold a server session of their own.
        let (database, pooler, pooled) = try await prepared("runner_session_pooled", .init(poolMode: .session, poolSize: 4))
        defer { pooler.stop() }
        let (route, epoch) = try await onThread { () -> (PoolerDetection.Route?, Int64) in
            let runner = PhaseRunner(connection: try PostgresConnection(configuration: .init(connectionString: pooled)),
                                     source: try PlanSource.builtIn())
            let epoch = try runner.run(.expand).epoch
            return (runner.route, epoch)
        }
        #expect(route == .sessionPooled)
        #expect(epoch == 1)
        let direct = try await onThread { () -> PoolerDetection.Route in
            try PoolerDetection.route(of: try database.connect()) { try database.connect() }
        }
        #expect(direct == .direct)
    }

    @Test func theRunnersSettingsDoNotOutliveItsTransactionOnAPooledServerConnection() async throws {
        let (_, pooler, pooled) = try await prepared("runner_pooled_settings", .init(poolMode: .transaction, poolSize: 1))
        defer { pooler.stop() }
        let leftovers = try await onThread { () -> SessionLeftovers in
            let connection = try PostgresConnection(configuration: .init(connectionString: pooled))
            let runner = SQLFileRunner(policy: .init(lockTimeout: .milliseconds(750), statementTimeout: .seconds(42)))
            var inForce = ""
            try runner.runInTransaction("CREATE TABLE pooled_items (id int PRIMARY KEY)", on: connection) { connection in
                inForce = try connection.query("SELECT current_setting('lock_timeout') AS l")[0].decode(String.self, "l")
            }
            #expect(inForce == "750ms")
            return try SessionLeftovers.probe(through: pooled)
        }
        #expect(leftovers == .none)
    }
}
