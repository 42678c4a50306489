import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// What the library does in the background and fails at reaches the logger its caller gave:
/// nothing fails silently.
@Suite("background failures are reported", .timeLimit(.minutes(3)))
struct BackgroundFailureTests {
    @Test func aHeartbeatThatLosesItsGrantIsReportedLeavesItsLastSuccessAndRecovers() async throws {
        try await Roles.withRoles("heartbeat_grant") { roles in
            try await roles.installAsMigrator()
            let capture = LogCapture()
            let pool = PostgresPool(configuration: roles.configuration(roles.app), maximumConnections: 1)
            let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                            applicationVersion: "4.0", formats: [.v1, .v2],
                                                            interval: .milliseconds(100), logger: capture.logger(label: "web-1"))
            #expect(registration.health.isHealthy)
            let heartbeat = "cutover.reader_heartbeat(text, text, text, text, text[], text)"
            let app = roles.app
            try await roles.admin { try $0.execute(unsafeSQL: "REVOKE EXECUTE ON FUNCTION \(heartbeat) FROM \(try $0.quoteIdentifier(app))") }

            // Every failed heartbeat is a warning naming the instance and the failures in a row.
            try #require(try await eventually { capture.records(at: .warning).count >= 2 })
            let warnings = capture.records(at: .warning)
            #expect(warnings.allSatisfy { $0.label == "web-1" && $0.metadata["instanceID"] == "web-1" })
            #expect(warnings.allSatisfy { $0.message.hasPrefix("reader heartbeat failed, trying again in 0.1 seconds: ") })
            #expect(warnings.allSatisfy { $0.message.contains("(SQLSTATE 42501)") })
            #expect(warnings.prefix(2).map { $0.metadata["failures"] } == ["1", "2"])
            let health = registration.health
            #expect(!health.isHealthy && health.consecutiveFailures >= 2)
            #expect((health.lastError as? PostgresError)?.sqlState == .insufficientPrivilege)

            // The registry keeps the time of the last heartbeat that succeeded: as time passes
            // without one (moved back here, as failing heartbeats leave it), the reader is late,
            // then stale.
            let lastSuccess = try await roles.admin { connection in
                try connection.query("SELECT last_seen_at FROM cutover.readers WHERE instance_id = 'web-1'")[0].decode(Date.self, "last_seen_at")
            }
            try await roles.admin {
                try $0.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = last_seen_at - interval '300 seconds' WHERE instance_id = 'web-1'")
            }
            let failuresBefore = capture.records(at: .warning).count
            try #require(try await eventually { capture.records(at: .warning).count > failuresBefore })
            // Late from half the staleness limit: with 400 s, from 200 s of silence, however long
            // a loaded machine took since the last success, up to 100 s.
            let listed = try await roles.admin { try ReaderRegistry.list(plan: "drafts", staleAfter: .seconds(400), on: $0) }
            #expect(listed.map(\.state) == [.late])
            #expect(listed.map(\.isLive) == [true])
            #expect(abs((listed.first?.lastSeenAt.timeIntervalSince(lastSuccess) ?? 0) + 300) < 0.001)
            #expect((listed.first?.silentFor ?? .zero) >= .seconds(300))
            let stale = try await roles.admin { try ReaderRegistry.list(plan: "drafts", staleAfter: .seconds(60), on: $0) }
            #expect(stale.map(\.state) == [.stale])

            // Given its grant back, the next heartbeat succeeds and says so once.
            try await roles.admin { try $0.execute(unsafeSQL: "GRANT EXECUTE ON FUNCTION \(heartbeat) TO \(try $0.quoteIdentifier(app))") }
            try #require(try await eventually { !capture.records(at: .notice).isEmpty })
            #expect(capture.records(at: .notice).map(\.message).first?.hasPrefix("reader heartbeat works again after ") == true)
            #expect(registration.health.isHealthy)
            let live = try await roles.admin { try ReaderRegistry.list(plan: "drafts", on: $0) }
            #expect(live.map(\.state) == [.live])
            try await registration.stop()
            await pool.shutdown()
        }
    }

    @Test func aLostListeningConnectionIsAWarningAndEveryFailedReadToo() async throws {
        let db = try await StoreDatabase.make("listener_lost", phase: .expanded)
        let capture = LogCapture()
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "fleet-logged"), plan: "drafts",
                                                    pollInterval: .milliseconds(100), logger: capture.logger(label: "fleet"))
        try #require(try await eventually { fleet.health.isListening })
        try await db.sql {
            try $0.query("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'fleet-logged' AND query LIKE 'LISTEN%'")
        }
        try #require(try await eventually { capture.records(at: .warning).contains { $0.message.hasPrefix("fleet writer path: listening connection lost") } })
        #expect(capture.records(at: .warning).allSatisfy { $0.label == "fleet" && $0.metadata["plan"] == "drafts" })

        // Reads that keep failing are each a warning, not only the first.
        try await db.sql { try $0.execute(unsafeSQL: "ALTER TABLE cutover.migration_state RENAME TO migration_state_away") }
        try #require(try await eventually {
            capture.records(at: .warning).filter { $0.message.hasPrefix("fleet writer path: reading the state failed") }.count >= 3
        })
        let failed = capture.records(at: .warning).filter { $0.message.hasPrefix("fleet writer path: reading the state failed") }
        #expect(failed.allSatisfy { $0.message.contains("migration_state") })
        try await db.sql { try $0.execute(unsafeSQL: "ALTER TABLE cutover.migration_state_away RENAME TO migration_state") }
        try #require(try await eventually { fleet.health.isHealthy })
        // Told once the read that works again has returned, a moment after the health says so.
        #expect(try await eventually {
            capture.records(at: .info).contains { $0.message.hasPrefix("fleet writer path: reading the state works again after ") }
        })
        await fleet.stop()
        await db.close()
    }

    @Test func aBackgroundFlushThatFailsIsAWarningAndKeepsItsCounts() async throws {
        let db = try await StoreDatabase.make("flush_fails", phase: .expanded)
        let capture = LogCapture()
        let store = try await PostgresDraftStore(pool: db.pool, outcomeFlushInterval: .milliseconds(100),
                                                 logger: capture.logger(label: "store"))
        try await db.sql { try $0.execute(unsafeSQL: "ALTER FUNCTION cutover.record_outcomes(text, text[], text[], bigint[]) RENAME TO record_outcomes_away") }
        store.outcomes.recordError(on: .modern)
        try #require(try await eventually { capture.records(at: .warning).count >= 2 })
        let warnings = capture.records(at: .warning)
        #expect(warnings.allSatisfy { $0.message.hasPrefix("writing outcome counts failed, keeping them for the next flush in 0.1 seconds: ") })
        #expect(warnings.prefix(2).map { $0.metadata["failures"] } == ["1", "2"])
        #expect(warnings.allSatisfy { $0.metadata["unflushed"] == "1" })
        #expect(store.outcomes.unflushed.map(\.count) == [1])
        try await db.sql { try $0.execute(unsafeSQL: "ALTER FUNCTION cutover.record_outcomes_away(text, text[], text[], bigint[]) RENAME TO record_outcomes") }
        try #require(try await eventually { !capture.records(at: .notice).isEmpty })
        #expect(store.outcomes.unflushed.isEmpty)
        #expect(try await db.sql { try $0.query("SELECT coalesce(sum(count), 0)::bigint AS n FROM cutover.outcome_log")[0].decode(Int64.self, "n") } == 1)
        try await store.outcomes.close()
        await db.close()
    }
}
