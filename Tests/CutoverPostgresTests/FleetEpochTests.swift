import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Fleet: the epoch each instance follows")
struct FleetEpochTests {
    private func runner(_ db: StoreDatabase) async throws -> PhaseRunnerBox {
        let database = db.database
        return try await onThread { PhaseRunnerBox(try PhaseRunner(connection: database.connect(applicationName: "epoch-test-runner"),
                                                                   source: PlanSource.builtIn(), options: .init(forceReaders: true))) }
    }

    private func followers(_ db: StoreDatabase) async throws -> [FleetMember] {
        try await db.sql { try ReaderRegistry.followers(plan: "drafts", on: $0) }
    }

    @Test(.timeLimit(.minutes(3)))
    func aRegistrationReportsTheEpochItsPathFollowsAtOnceAfterASwitch() async throws {
        let db = try await StoreDatabase.make("epoch_report", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "epoch-fleet"), plan: "drafts",
                                                    pollInterval: .milliseconds(200))
        // A heartbeat interval far longer than the test: only the change can make it report.
        let registration = try await ReaderRegistration(pool: db.pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(600),
                                                        following: fleet)
        let start = try await followers(db)
        #expect(start == [FleetMember(instanceID: "web-1", applicationName: "web", isLive: true, epoch: fleet.current.epoch)])
        let box = try await runner(db)
        let epoch = try await onThread { try box.runner.run(.switchModern).epoch }
        let caughtUp = try await db.sql { try FleetCatchUp.wait(plan: "drafts", epoch: epoch, timeout: .seconds(90), on: $0) }
        #expect(caughtUp.isComplete)
        #expect(caughtUp.following.map(\.instanceID) == ["web-1"])
        #expect(try await followers(db).first?.epoch == epoch)
        try await registration.stop()
        await fleet.stop()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func noOtherProcessCanReportForAnInstanceNorAnEpochThePlanHasNotReached() async throws {
        let db = try await StoreDatabase.make("epoch_forge", phase: .expanded)
        let token = ReaderRegistry.makeToken()
        let epoch = try await db.sql { connection -> Int64 in
            try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "web-1", applicationName: "web", applicationVersion: "2.0",
                                         formats: ["v1", "v2"], token: token, on: connection)
            return try #require(try MigrationState.load(plan: "drafts", on: connection)).epoch
        }
        let forged = try await db.sql {
            try ReaderRegistry.follows(instanceID: "web-1", token: ReaderRegistry.makeToken(), plan: "drafts", epoch: epoch, on: $0)
        }
        #expect(!forged)
        #expect(try await followers(db).first?.epoch == nil)
        await #expect(throws: ReaderRegistryError.self) {
            try await db.sql { try ReaderRegistry.follows(instanceID: "web-1", token: token, plan: "drafts", epoch: epoch + 1, on: $0) }
        }
        await #expect(throws: ReaderRegistryError.self) {
            try await db.sql { try ReaderRegistry.follows(instanceID: "web-1", token: token, plan: "no-such-plan", epoch: 0, on: $0) }
        }
        #expect(try await db.sql { try ReaderRegistry.follows(instanceID: "web-1", token: token, plan: "drafts", epoch: epoch, on: $0) })
        #expect(try await followers(db).first?.epoch == epoch)
        // A registration taken over after a silence starts with no epoch: the old process's says nothing of the new one.
        try await db.sql { try $0.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = now() - interval '121 seconds'") }
        try await db.sql {
            try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "web-1", applicationName: "web", applicationVersion: "2.1",
                                         formats: ["v2"], token: ReaderRegistry.makeToken(), on: $0)
        }
        #expect(try await followers(db).first?.epoch == nil)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func theWaitNamesWhoIsBehindAndTimesOut() async throws {
        let db = try await StoreDatabase.make("epoch_behind", phase: .expanded)
        let box = try await runner(db)
        // A live instance that never reports an epoch, as a process that does not follow the path.
        try await db.sql {
            try ReaderRegistry.heartbeat(plan: "drafts", instanceID: "batch-1", applicationName: "batch", applicationVersion: "1.0",
                                         formats: ["v1", "v2"], token: ReaderRegistry.makeToken(), on: $0)
        }
        let epoch = try await onThread { try box.runner.run(.switchModern).epoch }
        let (last, readings) = try await db.sql { connection in
            var seen: [FleetCatchUp] = []
            let last = try FleetCatchUp.wait(plan: "drafts", epoch: epoch, timeout: .milliseconds(600), on: connection) { seen.append($0) }
            return (last, seen)
        }
        #expect(!last.isComplete)
        #expect(last.behind.map(\.description) == ["batch-1 (no epoch reported)"])
        #expect(readings.count == 1)   // progress hears a reading only when it differs from the one before
        await db.close()
    }

    @Test func anInstanceThatFallsSilentDuringTheWaitIsGoneAndNotWaitedFor() {
        let before = FleetCatchUp(epoch: 7, members: [
            FleetMember(instanceID: "a", applicationName: "web", isLive: true, epoch: 7),
            FleetMember(instanceID: "b", applicationName: "web", isLive: true, epoch: 6),
            FleetMember(instanceID: "c", applicationName: "web", isLive: true, epoch: 6),
            FleetMember(instanceID: "old", applicationName: "web", isLive: false, epoch: 3),
        ])
        #expect(!before.isComplete)
        #expect(before.counted == 3)
        let after = FleetCatchUp(epoch: 7, members: [
            FleetMember(instanceID: "a", applicationName: "web", isLive: true, epoch: 8),
            FleetMember(instanceID: "b", applicationName: "web", isLive: false, epoch: 6),
            FleetMember(instanceID: "old", applicationName: "web", isLive: false, epoch: 3),
        ], seenLive: before.seenLive)
        #expect(after.isComplete)
        #expect(after.following.map(\.instanceID) == ["a"])
        #expect(after.gone.map(\.instanceID) == ["b", "c"])
        #expect(after.counted == 3)
    }
}
