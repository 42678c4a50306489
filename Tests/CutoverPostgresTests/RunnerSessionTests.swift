import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// What the runner needs of its connection: a server session of its own, and settings that end
/// with the transaction or the session they were made for.
@Suite("Runner: its own session")
struct RunnerSessionTests {
    @Test func aServerSessionHandedToAnotherClientDoesNotLetItIntoTheLease() async throws {
        let database = try await TestPostgres.database("runner_lease_holder")
        try await onThread {
            // One server session and two holders: what a transaction pooler makes of two runners
            // whose transactions it sends to the same server connection in turn.
            let session = try database.connect(applicationName: "pooled-server-session")
            try ControlSchema.install(on: session)
            try RunnerLock.acquire(plan: "drafts", holder: "runner-a", on: session)
            try RunnerLock.acquire(plan: "drafts", holder: "runner-a", on: session)   // re-entry by its holder
            #expect(throws: RunnerLockError.self) {
                try RunnerLock.acquire(plan: "drafts", idleHolderGrace: .zero, holder: "runner-b", on: session)
            }
            // Only the holder gives it up, on whichever server session its release runs.
            try RunnerLock.release(plan: "drafts", holder: "runner-b", on: session)
            #expect(try RunnerLock.holder(plan: "drafts", on: session) != nil)
            let other = try database.connect()
            try RunnerLock.release(plan: "drafts", holder: "runner-a", on: other)
            #expect(try RunnerLock.holder(plan: "drafts", on: session) == nil)
            try RunnerLock.acquire(plan: "drafts", holder: "runner-b", on: session)
        }
    }

    @Test func aDirectConnectionAndAPlainTCPProxyAreTakenAsDirect() async throws {
        let database = try await TestPostgres.database("runner_route_direct")
        let (proxy, proxied) = try database.throughLossyProxy()
        defer { proxy.stop() }
        let routes = try await onThread { () -> [PoolerDetection.Route] in
            let direct = try database.connect()
            let throughProxy = try PostgresConnection(configuration: .init(connectionString: proxied))
            return [try PoolerDetection.route(of: direct) { try database.connect() },
                    try PoolerDetection.route(of: throughProxy) { try PostgresConnection(configuration: .init(connectionString: proxied)) }]
        }
        #expect(routes == [.direct, .direct])
    }

    @Test func aFileOutsideATransactionLeavesNoSettingOnTheRunnersSession() async throws {
        let database = try await TestPostgres.database("runner_outside_settings")
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: "CREATE TABLE items (id int PRIMARY KEY, code int)")
            let before = try Self.timeouts(on: connection)
            let runner = SQLFileRunner(policy: .init(lockTimeout: .milliseconds(1234), statementTimeout: .seconds(77)))
            try runner.runOutsideTransaction("""
                CREATE INDEX CONCURRENTLY IF NOT EXISTS items_code ON items (code);
                """, table: "items", on: connection)
            let seen = try Self.timeouts(on: connection)
            #expect(seen == before)
            #expect(try runner.invalidIndexes(on: "items", connection: connection).isEmpty)
            // The file reports what it runs under, on a table of its session's own.
            try runner.runOutsideTransaction("""
                CREATE TEMPORARY TABLE seen AS SELECT current_setting('lock_timeout') AS l, current_setting('statement_timeout') AS s;
                INSERT INTO items SELECT 1, NULL FROM seen WHERE l = '1234ms' AND s = '77s';
                """, table: "items", on: connection)
            #expect(try connection.query("SELECT count(*) AS n FROM items")[0].decode(Int.self, "n") == 1)
            #expect(try Self.timeouts(on: connection) == before)
        }
    }

    private static func timeouts(on connection: PostgresConnection) throws -> [String] {
        let row = try connection.query("SELECT current_setting('lock_timeout') AS l, current_setting('statement_timeout') AS s")[0]
        return [try row.decode(String.self, "l"), try row.decode(String.self, "s")]
    }
}
