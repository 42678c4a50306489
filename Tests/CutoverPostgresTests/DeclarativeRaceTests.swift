import Cutover
#if canImport(Glibc)
import Glibc
#endif
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Synchronization
import Testing

/// The compiled backfill racing old and new writers on the same rows: the batch skips a row a
/// writer holds, a writer waiting for a row the batch holds is applied on the converted row,
/// and the two representations agree on every row afterwards.
@Suite("The compiled backfill racing writers", .timeLimit(.minutes(3)))
struct DeclarativeRaceTests {
    /// Set once the backfill's batch holds its rows.
    final class Signal: Sendable {
        private let value = Mutex(false)
        func raise() { value.withLock { $0 = true } }
        var isRaised: Bool { value.withLock { $0 } }
    }

    @Test func writersAndABackfillBatchOnTheSameRows() async throws {
        let database = try await TestPostgres.database("declarative_race")
        let compiled = try DeclarativePlan(manifest: Array(DeclarativeSyncTriggerTests.manifest.utf8)).compile()
        let backfill = try #require(compiled.plan.step(.backfill)?.backfill)
        let batchSQL = compiled.fileTexts[backfill.batch.path] ?? ""
        let batch = { @Sendable (connection: PostgresConnection) throws -> Int64 in
            try connection.query(PostgresQuery(unsafeSQL: batchSQL, binds: [String?.none.postgresBind, Int32(10).postgresBind, String?.none.postgresBind]))[0]
                .decode(Int64.self, "converted")
        }

        // A legacy write holds row 1: the batch skips it, and the write's own trigger converts it.
        try await onThread {
            let setup = try database.connect()
            _ = try ControlSchema.install(on: setup)
            try setup.execute(unsafeSQL: """
                CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO orders VALUES (1, 'new'), (2, 'paid'), (3, 'shipped'), (4, 'new')
                """)
            try CompiledSteps(compiled: compiled, connection: setup).run(.expand)
            let legacy = try database.connect(applicationName: "legacy-racer")
            try legacy.execute(unsafeSQL: "BEGIN; UPDATE orders SET status = 'shipped' WHERE id = 1")
            #expect(try batch(try database.connect()) == 3)
            try legacy.execute(unsafeSQL: "COMMIT")
            #expect(try Self.row(1, on: setup) == "shipped/3")
            // Back to unconverted, with the trigger off for this one statement.
            try setup.execute(unsafeSQL: """
                BEGIN; SET LOCAL session_replication_role = replica; UPDATE orders SET status_code = NULL WHERE id IN (2, 3, 4); COMMIT
                """)
        }

        // The batch holds rows 2 to 4, converted and not committed, while a new and an old writer wait for them.
        let holding = Signal()
        let backfiller = Task {
            try await onThread {
                let connection = try database.connect(applicationName: "backfill-racer")
                let watcher = try database.connect()
                try connection.execute(unsafeSQL: "BEGIN")
                #expect(try batch(connection) == 3)
                holding.raise()
                let deadline = ContinuousClock.now + .seconds(60)
                while try watcher.query("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE application_name IN ('modern-racer', 'legacy-racer')
                       AND wait_event_type = 'Lock' AND datname = current_database()
                    """)[0].decode(Int.self, "n") < 2 {
                    guard ContinuousClock.now < deadline else { throw CancellationError() }
                    usleep(10_000)
                }
                try connection.execute(unsafeSQL: "COMMIT")
            }
        }
        #expect(try await eventually { holding.isRaised })
        let modern = Task {
            try await onThread { try database.connect(applicationName: "modern-racer").execute(unsafeSQL: "UPDATE orders SET status_code = 1 WHERE id = 2") }
        }
        let legacy = Task {
            try await onThread { try database.connect(applicationName: "legacy-racer").execute(unsafeSQL: "UPDATE orders SET status = 'paid' WHERE id = 4") }
        }
        try await backfiller.value
        try await modern.value
        try await legacy.value
        try await onThread {
            let connection = try database.connect()
            #expect(try Self.row(2, on: connection) == "new/1", "the new writer's value, mirrored to the legacy column")
            #expect(try Self.row(3, on: connection) == "shipped/3", "the backfill's conversion")
            #expect(try Self.row(4, on: connection) == "paid/2", "the old writer's value, mirrored to the modern column")
            #expect(try CompiledSteps(compiled: compiled, connection: connection).failingChecks(.contract) == [])
        }
    }

    private static func row(_ id: Int64, on connection: PostgresConnection) throws -> String? {
        try connection.query("SELECT status || '/' || coalesce(status_code::text, 'NULL') AS row FROM orders WHERE id = \(id)")
            .first?.decode(String.self, "row")
    }
}
