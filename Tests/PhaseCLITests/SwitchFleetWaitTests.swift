import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase switch --wait-for-fleet` through the built binary, with instances of the test's own.
@Suite("phase switch --wait-for-fleet", .timeLimit(.minutes(3)))
struct SwitchFleetWaitTests {
    @Test func theSwitchWaitsUntilEveryLiveInstanceFollowsAndTimesOutNamingTheOneBehind() async throws {
        let db = try await WorkflowDatabase.make("switch_wait_fleet", rows: 20)
        for arguments in [["init"], ["expand"]] {
            let run = try await db.phase(arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        let configuration = db.database.configuration(applicationName: "wait-fleet-app")
        let pool = PostgresPool(configuration: configuration, maximumConnections: 2)
        let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts", pollInterval: .milliseconds(500))
        let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(600),
                                                        following: fleet)
        let switched = try await db.phase(["switch", "modern", "--wait-for-fleet", "--fleet-timeout", "30s"])
        #expect(switched.status == 0, "\(switched.diagnostics)")
        #expect(switched.output.contains("fleet: 1 of 1 live instances follow epoch 2"), "\(switched.output)")
        #expect(switched.diagnostics.contains("switch modern committed at epoch 2; waiting up to 30s"), "\(switched.diagnostics)")
        #expect(fleet.current == .init(path: .modern, epoch: 2))

        // A live instance that reports no epoch: the switch commits, the wait ends at its timeout with exit 4.
        try await db.sql {
            try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "batch-7", applicationName: "batch", applicationVersion: "1.0",
                                         formats: ["v1", "v2"], token: ReaderRegistry.makeToken(), on: $0)
        }
        let behind = try await db.phase(["switch", "legacy", "--wait-for-fleet", "--fleet-timeout", "2s"])
        #expect(behind.status == 4, "\(behind.diagnostics)")
        // web-1 may or may not have followed within those 2s (its poll and the notification race the
        // timeout on a loaded machine); batch-7, which never reports, is always named.
        #expect(behind.diagnostics.contains("Error: switch legacy committed at epoch 3, but "), "\(behind.diagnostics)")
        #expect(behind.diagnostics.contains("live instances did not report following it within 2s: batch-7 (no epoch reported)"),
                "\(behind.diagnostics)")
        #expect(behind.output.contains("behind: batch-7 (no epoch reported)"), "\(behind.output)")
        #expect(try await db.value(String.self, "SELECT writer_path FROM cutover.migration_state") == "legacy")

        // Once it leaves, the same command changes nothing and waits again: done.
        try await db.sql { try $0.execute(unsafeSQL: "DELETE FROM cutover.readers WHERE instance_id = 'batch-7'") }
        let again = try await db.phase(["switch", "legacy", "--wait-for-fleet", "--fleet-timeout", "30s", "--format", "json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.output.contains(#""alreadyDone": true"#), "\(again.output)")
        #expect(again.output.contains(#""caughtUp": true"#), "\(again.output)")
        try await registration.stop()
        await fleet.stop()
        await pool.shutdown()
    }
}
