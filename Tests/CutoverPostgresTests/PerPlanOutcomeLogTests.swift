import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The outcome log is kept per plan (control schema version 6): each plan's recorder counts
/// under its plan, and the observation of one plan reads only that plan's counts.
@Suite("Per-plan outcome log")
struct PerPlanOutcomeLogTests {
    @Test(.timeLimit(.minutes(3)))
    func twoPlansCountApartAndEachIsObservedAlone() async throws {
        let db = try await StoreDatabase.make("outcomes_two_plans", poolSize: 2)
        let orders = OutcomeRecorder(pool: db.pool, plan: "orders", flushInterval: nil)
        for _ in 0..<3 { db.store.outcomes.record(.committed, on: .modern) }
        for _ in 0..<5 { orders.record(.committed, on: .modern) }
        for _ in 0..<2 { orders.recordError(on: .modern) }
        try await db.store.outcomes.flush()
        try await orders.flush()
        let rows = try await db.sql { connection in
            try connection.query("""
                SELECT plan || ' ' || path || ' ' || outcome || ' ' || sum(count) AS row
                  FROM cutover.outcome_log GROUP BY plan, path, outcome ORDER BY 1
                """).map { try $0.decode(String.self, "row") }
        }
        #expect(rows == ["drafts modern committed 3", "orders modern committed 5", "orders modern error 2"])
        let thresholds = ObservationThresholds(minimumSaves: 1)
        let (drafts, ordersReport) = try await db.sql { connection in
            (try RollbackObservation.observe(plan: "drafts", thresholds: thresholds, on: connection),
             try RollbackObservation.observe(plan: "orders", thresholds: thresholds, on: connection))
        }
        #expect(drafts.modern.saves == 3 && drafts.modern.errors == 0)
        #expect(!drafts.isCrossed)
        #expect(ordersReport.modern.saves == 7 && ordersReport.modern.errors == 2)
        #expect(ordersReport.isCrossed)
        try await orders.close()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aVersion5OutcomeLogMovesToTheDraftsPlanAndItsCallKeepsCountingThere() async throws {
        try await Roles.withRoles("outcomes_from_5") { roles in
            try await roles.installAsMigrator(version: 5, schema: ControlSchemaVersion5.schema, grants: ControlSchemaVersion5.grants)
            try await roles.asApplication { app in
                try app.query("SELECT cutover.record_outcomes(ARRAY['modern'], ARRAY['committed'], ARRAY[4::bigint])")
            }
            #expect(try await roles.upgradeAsMigrator() == .installed(from: 5))
            // Version 5's call goes on counting, as the drafts plan's; the plan's own call counts apart.
            try await roles.asApplication { app in
                try app.query("SELECT cutover.record_outcomes(ARRAY['modern'], ARRAY['committed'], ARRAY[1::bigint])")
                try app.query("SELECT cutover.record_outcomes('orders', ARRAY['modern'], ARRAY['error'], ARRAY[2::bigint])")
            }
            let rows = try await roles.admin { connection in
                try connection.query("""
                    SELECT plan || ' ' || outcome || ' ' || sum(count) AS row FROM cutover.outcome_log GROUP BY plan, outcome ORDER BY 1
                    """).map { try $0.decode(String.self, "row") }
            }
            #expect(rows == ["drafts committed 5", "orders error 2"])
            let refused = try await roles.asApplication { app in
                [RolesTests.failure { try app.execute(unsafeSQL: "SELECT * FROM cutover.outcome_log") }?.sqlState,
                 RolesTests.failure {
                     try app.execute(unsafeSQL: "SELECT cutover.record_outcomes('', ARRAY['modern'], ARRAY['error'], ARRAY[1::bigint])")
                 }?.sqlState]
            }
            #expect(refused == [.insufficientPrivilege, .invalidParameterValue])
        }
    }
}
