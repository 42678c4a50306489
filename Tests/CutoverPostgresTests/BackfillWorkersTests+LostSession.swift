import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// Several workers whose run loses its own session: the workers end before the run throws.
extension BackfillWorkersTests {
    /// The calling session is ended while four workers convert: the run's next report of their
    /// progress fails, and the run throws only once every worker has finished its batch in
    /// flight and closed its session, so that nothing converts behind it. The next run finishes
    /// the ranges alone, every row converted once.
    @Test func aRunThatLosesItsOwnSessionStopsItsWorkersBeforeItThrows() async throws {
        let db = try await Self.auditedTable("backfill_workers_lost_session", rows: 400)
        // A history row for the run to report to: each report is a statement on its own session.
        let attempt = try await db.sql { connection in
            try connection.query("""
                INSERT INTO cutover.phase_history (plan, step, direction, database_role, os_user, outcome)
                VALUES ('drafts', 'backfill', 'forward', current_user, 'test', 'running') RETURNING id
                """)[0].decode(Int64.self, "id")
        }
        // Batches of 5 rows 50 ms apart: each range of about 100 rows takes a second or more.
        let engine = try Self.engine(workers: 4, batchSize: 5, batchDelay: .milliseconds(50))
        let callingPID = Atomic<Int32>(0)
        let run = Task {
            try await onThread {
                let connection = try Self.backfillSession(db)
                callingPID.store(try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid"), ordering: .relaxed)
                return try engine.run(on: connection, attempt: attempt)
            }
        }
        // Every worker has converted part of its range.
        let workers = try await db.sql { connection -> [Int32] in
            while true {
                let rows = try connection.query("""
                    SELECT worker_pid FROM cutover.backfill_ranges
                     WHERE plan = 'drafts' AND worker_pid IS NOT NULL AND converted > 0 AND NOT is_done ORDER BY range_no
                    """)
                if rows.count == 4 { return try rows.map { try $0.decode(Int32.self, "worker_pid") } }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        let caller = callingPID.load(ordering: .relaxed)
        #expect(caller != 0 && !workers.contains(caller))
        let ended = try await db.sql { try $0.query("SELECT pg_terminate_backend(\(caller), 10000) AS ended")[0].decode(Bool.self, "ended") }
        #expect(ended)
        guard case .failure(let error) = await run.result else {
            Issue.record("the run finished without its session")
            await db.close()
            return
        }
        #expect(error is PostgresError, "\(error)")

        // When the run has thrown, its workers' sessions run nothing, and once they have left
        // the server no batch has converted a row since.
        let (active, convertedWhenThrown) = try await db.sql { connection in
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM pg_stat_activity
                         WHERE pid IN (SELECT worker_pid FROM cutover.backfill_ranges WHERE plan = 'drafts') AND state = 'active') AS active,
                       (SELECT count(*) FROM drafts WHERE document IS NOT NULL) AS converted
                """)[0]
            return (try row.decode(Int64.self, "active"), try row.decode(Int64.self, "converted"))
        }
        #expect(active == 0, "worker sessions still running a statement after the run threw")
        let haveLeft = try await db.sql { connection -> Bool in
            let deadline = ContinuousClock.now + .seconds(60)
            while try connection.query("""
                SELECT count(*) AS n FROM pg_stat_activity
                 WHERE pid IN (SELECT worker_pid FROM cutover.backfill_ranges WHERE plan = 'drafts')
                """)[0].decode(Int64.self, "n") > 0 {
                guard ContinuousClock.now < deadline else { return false }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return true
        }
        #expect(haveLeft)
        let convertedOnceLeft = try await db.sql {
            try $0.query("SELECT count(*) AS n FROM drafts WHERE document IS NOT NULL")[0].decode(Int64.self, "n")
        }
        #expect(convertedWhenThrown < 400 && convertedOnceLeft == convertedWhenThrown,
                "\(convertedWhenThrown) rows converted when the run threw, \(convertedOnceLeft) once its workers had left")

        let rerun = try await onThread { try Self.engine(workers: 4, batchSize: 50).run(on: Self.backfillSession(db)) }
        let stored = try await db.sql {
            try $0.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0].decode(Int64.self, "backfill_converted")
        }
        #expect(rerun.converted == 400 && rerun.convertedBefore == convertedWhenThrown && stored == 400, "\(rerun), stored \(stored)")
        let audit = try await Self.audit(db)
        #expect(audit == Audit(byBackfill: 400, byApplication: 0, convertedAgain: 0, backfillWrites: 400, backfillWritesOfConvertedRows: 0),
                "every row converted once by the two runs together: \(audit)")
        await db.close()
    }
}
