import CutoverTestSupport
import Foundation
@testable import PostgresClient
import PostgresFaults
import Testing

/// ``PostgresPool/pipelinedTransaction(_:)``: sent from the caller's task, answered through the
/// shared poller, and classified as the connection's own pipelined transaction is.
@Suite("Pipelined transactions on the pool")
struct PooledPipelineTests {
    static let database = Task { () throws -> TestDatabase in
        let database = try await TestPostgres.database("pooled_pipeline")
        _ = try await runOnDedicatedThread {
            try database.connect().execute(unsafeSQL: """
                CREATE TABLE numbers (n int PRIMARY KEY, label text);
                CREATE TABLE deferred_unique (n int UNIQUE DEFERRABLE INITIALLY DEFERRED)
                """)
        }
        return database
    }

    private func count(_ database: TestDatabase, where condition: String) async throws -> Int {
        try await runOnDedicatedThread {
            try database.connect().execute(unsafeSQL: "SELECT count(*) FROM numbers WHERE \(condition)")[0].decode(Int.self, at: 0)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func manyCallersOverFewConnectionsEachCommitOnceAndGetTheirOwnRows() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 4, acquireTimeout: .seconds(120))
        let returned = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for n in 1000..<1064 {
                group.addTask {
                    let rows = try await pool.pipelinedTransaction(
                        "INSERT INTO numbers (n, label) VALUES (\(n), \("many")) RETURNING n * 2 AS doubled")
                    return (n, try rows[0].decode(Int.self, "doubled"))
                }
            }
            var returned: [(Int, Int)] = []
            for try await pair in group { returned.append(pair) }
            return returned
        }
        #expect(returned.count == 64)
        #expect(returned.allSatisfy { $0.1 == $0.0 * 2 })
        #expect(try await count(database, where: "label = 'many'") == 64)
        // The first transaction on each connection prepares its statements on the connection's
        // thread; every later one is read by the poller.
        #expect(pool.polledTransactions >= 64 - 4)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func binaryByteaAndUTF8TextTravelThroughThePoller() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        let bytes = (0...255).map { UInt8($0) }
        let document = PostgresBind(utf8Text: Array("{\"label\": \"pollé\"}".utf8), type: .jsonb)
        for n in 4000..<4003 {
            let rows = try await pool.pipelinedTransaction("""
                INSERT INTO numbers (n, label) VALUES (\(n), \(document) ->> 'label')
                RETURNING \(bytes) AS bytes, label
                """)
            #expect(try rows[0].decode([UInt8].self, "bytes") == bytes)
            #expect(try rows[0].decode(String.self, "label") == "pollé")
        }
        // The first transaction prepares on the connection's thread; the others are polled.
        #expect(pool.polledTransactions >= 2)
        #expect(try await count(database, where: "label = 'pollé'") == 3)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func tasksThatPreferThePoolsExecutorRunOnThePollersThreadsAndAllFinish() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 4, acquireTimeout: .seconds(120))
        let executor = try #require(PostgresPool.taskExecutor)
        let pollers = try #require(PollerGroup.shared)
        // More tasks than connections, each mixing pipelined transactions (read by the poller)
        // with work on a connection's own thread, and waiting for connections in the pool.
        let results = try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
            for n in 0..<32 {
                group.addTask(executorPreference: executor) {
                    var sum = 0
                    var alwaysOnPoller = true
                    for i in 0..<5 {
                        sum += try await pool.pipelinedTransaction("SELECT \(n) + \(i) AS s")[0].decode(Int.self, "s")
                        alwaysOnPoller = alwaysOnPoller && pollers.isCurrentThread
                    }
                    sum += try await pool.withConnection { try $0.query("SELECT \(n) AS n")[0].decode(Int.self, "n") }
                    alwaysOnPoller = alwaysOnPoller && pollers.isCurrentThread
                    return (n, sum, alwaysOnPoller)
                }
            }
            var results: [(Int, Int, Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 32)
        #expect(results.allSatisfy { $0.1 == 6 * $0.0 + 10 })
        #expect(results.allSatisfy { $0.2 })
        // A task without the preference runs on the cooperative threads.
        _ = try await pool.pipelinedTransaction("SELECT \(1) AS n")
        #expect(!pollers.isCurrentThread)
        await pool.shutdown()
    }

    @Test func thereIsAPollerPerCoreUpToFourAndEachServesConnections() throws {
        let group = try #require(PollerGroup.shared)
        #expect(group.pollers.count == min(ProcessInfo.processInfo.activeProcessorCount, 4))
        // Every poller serves connections (other tests open connections meanwhile, so the
        // turns seen here need not be exactly even).
        let given = Set((0..<group.pollers.count * 8).map { _ in ObjectIdentifier(group.pollerForConnection()) })
        #expect(given == Set(group.pollers.map(ObjectIdentifier.init)))
    }

    @Test(.timeLimit(.minutes(3)))
    func anErrorOfTheStatementIsDefiniteAndTheConnectionIsRolledBackForTheNextCaller() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        let insert: (Int) -> PostgresQuery = { "INSERT INTO numbers (n, label) VALUES (\($0), \("refused")) RETURNING n" }
        _ = try await pool.pipelinedTransaction(insert(2000))
        let pid = try await pool.withConnection { $0.backendPID }
        let polledBefore = pool.polledTransactions

        // A duplicate key: the server refuses the statement, so the COMMIT is skipped.
        let error = await #expect(throws: PostgresError.self) { try await pool.pipelinedTransaction(insert(2000)) }
        #expect(error?.code == .server)
        #expect(error?.sqlState == .uniqueViolation)
        #expect(pool.polledTransactions == polledBefore + 1)

        let (samePID, state) = try await pool.withConnection { ($0.backendPID, $0.transactionState) }
        #expect(samePID == pid)
        #expect(state == .idle)
        _ = try await pool.pipelinedTransaction(insert(2001))
        #expect(try await count(database, where: "label = 'refused'") == 2)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aCommitTheServerRefusesIsDefinite() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        _ = try await pool.pipelinedTransaction("INSERT INTO deferred_unique VALUES (\(1))")
        // The unique check is deferred to COMMIT, which the server refuses: nothing committed.
        let error = await #expect(throws: PostgresError.self) {
            try await pool.pipelinedTransaction("INSERT INTO deferred_unique VALUES (\(1))")
        }
        #expect(error?.code == .server)
        #expect(error?.sqlState == .uniqueViolation)
        let rows = try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM deferred_unique")[0].decode(Int.self, "n") }
        #expect(rows == 1)
        #expect(pool.polledTransactions == 1)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aCommitRefusedAtTheSyncIsDefiniteOnTheConnectionsOwnThreadToo() async throws {
        let database = try await Self.database.value
        let (answers, left, state) = try await runOnDedicatedThread { () -> ([String], Int, PostgresConnection.TransactionState) in
            let connection = try database.connect()
            try connection.execute(unsafeSQL: "CREATE TEMPORARY TABLE once (n int UNIQUE DEFERRABLE INITIALLY DEFERRED)")
            var answers: [String] = []
            for _ in 0..<2 {
                do {
                    let rows = try connection.pipelinedTransaction("INSERT INTO once VALUES (\(7)) RETURNING n")
                    answers.append("rows \(try rows[0].decode(Int.self, "n"))")
                } catch let error as PostgresError {
                    answers.append("\(error.code) \(error.sqlState?.rawValue ?? "-")")
                }
            }
            let left = try connection.query("SELECT count(*) AS n FROM once")[0].decode(Int.self, "n")
            return (answers, left, connection.transactionState)
        }
        // The second INSERT ran and returned its row, but the commit at the Sync refused it:
        // the row the statement returned is not an answer.
        #expect(answers == ["rows 7", "server 23505"])
        #expect(left == 1)
        #expect(state == .idle)
    }

    @Test(.timeLimit(.minutes(3)))
    func statementsTheServerForgotArePreparedAgain() async throws {
        let database = try await Self.database.value
        var configuration = database.configuration()
        configuration.preparedStatements = .perConnection
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        let select: PostgresQuery = "SELECT \(20) + \(1) AS n"
        #expect(try await pool.pipelinedTransaction(select)[0].decode(Int.self, "n") == 21)
        // As a pooler's DISCARD ALL would: the prepared statement is gone.
        try await pool.withConnection { try $0.execute(unsafeSQL: "DEALLOCATE ALL") }
        #expect(try await pool.pipelinedTransaction(select)[0].decode(Int.self, "n") == 21)
        #expect(try await pool.pipelinedTransaction(select)[0].decode(Int.self, "n") == 21)
        #expect(pool.statistics.opened == 1)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func requestsAndAnswersLargerThanTheSocketBuffersArriveWhole() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        let big = String(repeating: "abcdefgh", count: 1_000_000)
        let query: PostgresQuery = "SELECT length(\(big)) AS sent, repeat(\("xy"), \(Int32(3_000_000))) AS answer"
        _ = try await pool.pipelinedTransaction(query)
        let rows = try await pool.pipelinedTransaction(query)
        #expect(try rows[0].decode(Int.self, "sent") == 8_000_000)
        let answer = try rows[0].decode(String.self, "answer")
        #expect(answer.utf8.count == 6_000_000)
        #expect(answer.hasPrefix("xyxy") && answer.hasSuffix("xyxy"))
        #expect(pool.polledTransactions == 1)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aRequestTheSocketCannotTakeAtOnceIsWrittenAsItDrains() async throws {
        let database = try await Self.database.value
        let (pool, proxy) = try Self.poolThroughProxy(to: database)
        let big = String(repeating: "abcdefgh", count: 4_000_000)
        let query: PostgresQuery = "SELECT length(\(big)) AS sent"
        _ = try await pool.pipelinedTransaction("SELECT length(\("warm-up")) AS sent")
        // 32 MB that nobody reads for a while: more than the sockets on the way can hold, so
        // the rest waits in libpq until the socket is writable again, which only the poller
        // can see (the server answers nothing before it has the whole request).
        proxy.holdClientBytes()
        let transaction = Task { try await pool.pipelinedTransaction(query) }
        #expect(try await eventually(pause: .milliseconds(5)) { pool.transactionsWrittenAsTheSocketDrained == 1 },
                "the request was never left waiting for the socket")
        proxy.releaseClientBytes()
        #expect(try await transaction.value[0].decode(Int.self, "sent") == 32_000_000)
        #expect(pool.polledTransactions == 1)
        await pool.shutdown()
        proxy.stop()
    }

    private static func poolThroughProxy(to database: TestDatabase) throws -> (PostgresPool, LossyProxy) {
        let (proxy, proxied) = try database.throughLossyProxy()
        let pool = PostgresPool(configuration: .init(connectionString: proxied, connectTimeout: TestPostgres.connectTimeout),
                                maximumConnections: 1)
        return (pool, proxy)
    }

    @Test(.timeLimit(.minutes(3)))
    func aTerminatedBackendIsReplacedBeforeTheNextTransaction() async throws {
        let database = try await Self.database.value
        let pool = PostgresPool(configuration: database.configuration(applicationName: "pipeline-terminate"),
                                maximumConnections: 1)
        let first = try await pool.pipelinedTransaction("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
        #expect(try await database.terminateBackend(first))
        let second = try await pool.pipelinedTransaction("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
        #expect(second != first)
        #expect(pool.statistics.opened == 2)
        await pool.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func aLostAnswerToCommitIsOutcomeUnknownThoughTheServerCommitted() async throws {
        let database = try await Self.database.value
        let (pool, proxy) = try Self.poolThroughProxy(to: database)
        let insert: (Int) -> PostgresQuery = { "INSERT INTO numbers (n, label) VALUES (\($0), \("lost")) RETURNING n" }
        _ = try await pool.pipelinedTransaction(insert(3000))
        proxy.loseNextReplyToCommit()
        let error = await #expect(throws: PostgresError.self) { try await pool.pipelinedTransaction(insert(3001)) }
        #expect(error?.code == .outcomeUnknown)
        #expect(proxy.lostReplyCount == 1)
        #expect(pool.polledTransactions == 1)
        #expect(try await count(database, where: "label = 'lost'") == 2)
        // The broken connection is replaced for the next caller.
        _ = try await pool.pipelinedTransaction(insert(3002))
        #expect(pool.statistics.opened == 2)
        await pool.shutdown()
        proxy.stop()
    }
}
