@testable import CutoverPostgres
import CutoverTestSupport
import Dispatch
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The count a backfill takes on a session of its own when the table is too large to count
/// before the first batch: what it reads, and how the backfill stops it when it ends first.
@Suite("Background count of the rows still to convert", .timeLimit(.minutes(2)))
struct BackgroundRemainingCountTests {
    /// A count that would read for ten minutes.
    static let endless = "SELECT count(*) FROM pg_sleep(600)"

    /// The rows converted and those still to convert, read in one snapshot.
    @Test func landsWithTheConvertedAndTheRemainingRows() async throws {
        let db = try await BackfillEngineTests.expandedTable("background_count_lands", rows: 30, width: 2)
        try await db.sql { try $0.query("UPDATE cutover.migration_state SET backfill_converted = 7 WHERE plan = 'drafts'") }
        let remainingSQL = try BackfillPassesTests.engine(batchSize: 10).remainingSQL
        let database = db.database
        let counting = BackgroundRemainingCount(plan: "drafts", remainingSQL: remainingSQL, openSession: { try database.connect() })
        let outcome = try await Self.outcome(of: counting)
        let counted = try outcome.get()
        #expect(counted.converted == 7 && counted.remaining == 30)
        #expect(!counting.wasCancelled)
        await db.close()
    }

    /// The server ignores a cancel request that reaches a session between two statements; the
    /// count sees the cancel before it sends the next one, and never starts the long read.
    @Test func aCancelWhileTheSessionWaitsStopsItBeforeItsNextStatement() async throws {
        let db = try await BackfillEngineTests.expandedTable("background_count_idle_cancel", rows: 3)
        let database = db.database
        let between = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let counting = BackgroundRemainingCount(plan: "drafts", remainingSQL: Self.endless, openSession: { try database.connect() },
                                                beforeStatement: { statement in
            // Before the count's own read: its session has run two statements and waits.
            guard statement == 3 else { return }
            between.signal()
            cancelled.wait()
        })
        try await onThread {
            between.wait()
            counting.cancel()
            cancelled.signal()
        }
        let outcome = try await Self.outcome(of: counting)
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(counting.wasCancelled)
        // Its database's sessions only: the other tests of the cluster run the same statement.
        let reading = try await db.sql { connection in
            try connection.query("""
                SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = \(Self.endless)
                """)[0].decode(Int64.self, "n")
        }
        #expect(reading == 0)
        await db.close()
    }

    /// A cancel while the count reads stops its statement on the server.
    @Test func aCancelWhileItReadsStopsTheStatement() async throws {
        let db = try await BackfillEngineTests.expandedTable("background_count_running_cancel", rows: 3)
        let database = db.database
        let counting = BackgroundRemainingCount(plan: "drafts", remainingSQL: Self.endless, openSession: { try database.connect() })
        // Wait for the read to be running on the server.
        try await onThread {
            let watcher = try database.connect()
            while try watcher.query("""
                SELECT count(*) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND query = \(Self.endless) AND state = 'active'
                """)[0].decode(Int64.self, "n") == 0 {
                try watcher.execute(unsafeSQL: "SELECT pg_sleep(0.02)")
            }
        }
        counting.cancel()
        let outcome = try await Self.outcome(of: counting)
        let error = try #require(throws: PostgresError.self) { try outcome.get() }
        #expect(error.sqlState == .queryCanceled)
        #expect(counting.wasCancelled)
        await db.close()
    }

    /// The count's outcome once it has landed.
    static func outcome(of counting: BackgroundRemainingCount) async throws -> Result<BackgroundRemainingCount.Counted, any Error> {
        try await onThread {
            while true {
                if let outcome = counting.outcome { return outcome }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }
}
