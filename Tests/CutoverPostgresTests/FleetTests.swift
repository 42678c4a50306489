import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Fleet: writer switch and reader registry")
struct FleetTests {
    /// A database at `phase` and a runner on it.
    private func runner(_ db: StoreDatabase, options: PhaseRunner.Options = .init(forceReaders: true)) async throws -> PhaseRunnerBox {
        let database = db.database
        return try await onThread { PhaseRunnerBox(try PhaseRunner(connection: database.connect(applicationName: "fleet-test-runner"),
                                                                   source: PlanSource.builtIn(), options: options)) }
    }

    @Test(.timeLimit(.minutes(3)))
    func sixteenInstancesAllLearnASwitchAndALostListenerCatchesUp() async throws {
        let db = try await StoreDatabase.make("fleet_switch", phase: .expanded)
        let fleet = try await withThrowingTaskGroup(of: FleetWriterPath.self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "fleet-\(index)"), plan: "drafts",
                                                    pollInterval: .seconds(60))
                }
            }
            var all: [FleetWriterPath] = []
            for try await member in group { all.append(member) }
            return all
        }
        #expect(fleet.allSatisfy { $0.currentPath() == .legacy })
        let box = try await runner(db)
        // Every listener must be in place before the switch: wait until all 16 sessions LISTEN,
        // within a bound that only turns a hang into a failure.
        try #require(try await eventually {
            try await db.sql { try $0.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'fleet-%' AND query LIKE 'LISTEN%'")[0].decode(Int.self, "n") } == 16
        })
        let switched = try await onThread { try box.runner.run(.switchModern).epoch }
        // Each member learns the switch from its notification: they poll once a minute, after
        // this wait. How fast they learn it is the benchmark's to measure (100 ms p99), not a test's.
        let reached = await withTaskGroup(of: Bool.self) { group in
            for member in fleet { group.addTask { await member.waitForEpoch(switched, timeout: .seconds(20)) } }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(reached == Array(repeating: true, count: 16))
        #expect(fleet.allSatisfy { $0.currentPath() == .modern })

        // One instance loses its listening connection; the next switch still reaches it.
        try await db.sql { try $0.query("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'fleet-3' AND query LIKE 'LISTEN%'") }
        let back = try await onThread { try box.runner.run(.switchLegacy).epoch }
        for member in fleet { #expect(await member.waitForEpoch(back, timeout: .seconds(10))) }
        #expect(fleet.allSatisfy { $0.currentPath() == .legacy })
        for member in fleet { await member.stop() }
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func pollingCatchesAChangeWhoseNotificationWasMissed() async throws {
        let db = try await StoreDatabase.make("fleet_poll", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .milliseconds(200))
        // A change committed without its NOTIFY, as if the notification had been lost.
        try await db.sql { try $0.query("UPDATE cutover.migration_state SET writer_path = 'modern', phase = 'modern', epoch = epoch + 1") }
        #expect(await fleet.waitForEpoch(2, timeout: .seconds(5)))
        #expect(fleet.currentPath() == .modern)
        await fleet.stop()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aRouterFollowingTheFleetPathSavesOnTheSwitchedPath() async throws {
        let db = try await StoreDatabase.make("fleet_router", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts")
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: db.store), modern: ModernDraftAdapter(storage: db.store),
                                following: fleet)
        _ = try await router.save(SaveDraft(operationScope: "t", operationID: "a", draftID: "d", expectedRevision: 0,
                                            content: DraftContent(title: "one")))
        let box = try await runner(db)
        let epoch = try await onThread { try box.runner.run(.switchModern).epoch }
        #expect(await fleet.waitForEpoch(epoch, timeout: .seconds(5)))
        _ = try await router.save(SaveDraft(operationScope: "t", operationID: "b", draftID: "d", expectedRevision: 1,
                                            content: DraftContent(title: "two")))
        let counts = await router.counts
        #expect(counts.calls(on: .legacy) == 1)
        #expect(counts.calls(on: .modern) == 1)
        let paths = try await db.sql { try $0.query("SELECT path FROM cutover.operation_ledger ORDER BY revision").map { try $0.decode(String.self, "path") } }
        #expect(paths == ["legacy", "modern"])
        await fleet.stop()
        await db.close()
    }

    /// Sends `payloads` on the fleet's channel from a connection of the test, as any role could.
    private func notify(_ db: StoreDatabase, _ payloads: [String]) async throws {
        try await db.sql { connection in
            try connection.execute(unsafeSQL: "BEGIN")
            for payload in payloads {
                try connection.query("SELECT pg_notify(\(MigrationState.notificationChannel), \(payload))")
            }
            try connection.execute(unsafeSQL: "COMMIT")
        }
    }

    /// The plan's path and epoch as the control schema holds them.
    private func stored(_ db: StoreDatabase) async throws -> FleetWriterPath.Setting {
        let state = try #require(try await db.sql { try MigrationState.load(plan: "drafts", on: $0) })
        return .init(path: state.writerPath, epoch: state.epoch)
    }

    @Test(.timeLimit(.minutes(3)))
    func aForgedNotificationChangesNothingAndTheFleetFollowsTheRealSwitchAndRollback() async throws {
        let db = try await StoreDatabase.make("fleet_forged", phase: .expanded)
        // No poll within the test: only notifications can move the fleet.
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .seconds(600))
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: db.store), modern: ModernDraftAdapter(storage: db.store),
                                following: fleet)
        let box = try await runner(db)
        // The real switch also proves the fleet listens: it can only learn of it through LISTEN.
        let modern = try await onThread { try box.runner.run(.switchModern).epoch }
        #expect(await fleet.waitForEpoch(modern, timeout: .seconds(10)))
        #expect(fleet.current == .init(path: .modern, epoch: modern))

        try await notify(db, [#"{"plan":"drafts","writerPath":"legacy","epoch":9223372036854775807}"#])
        let forged = try await onThread { try box.runner.run(.switchLegacy).epoch }
        #expect(await fleet.waitUntil(timeout: .seconds(10)) { $0.epoch == forged })
        #expect(fleet.current == .init(path: .legacy, epoch: forged))

        let again = try await onThread { try box.runner.run(.switchModern).epoch }
        #expect(await fleet.waitUntil(timeout: .seconds(10)) { $0.epoch == again })
        #expect(fleet.current == .init(path: .modern, epoch: again))
        #expect(fleet.current == (try await stored(db)))
        _ = try await router.save(SaveDraft(operationScope: "t", operationID: "after-forgery", draftID: "d", expectedRevision: 0,
                                            content: DraftContent(title: "saved on the real path")))
        let path = try await db.sql { try $0.query("SELECT path FROM cutover.operation_ledger WHERE operation_id = 'after-forgery'")[0].decode(String.self, "path") }
        #expect(path == "modern")
        #expect(fleet.health.isHealthy)
        #expect(fleet.health.isListening)
        await fleet.stop()
        await db.close()
    }

    /// A registration's heartbeat waits on the fleet between beats; stopping it cancels that
    /// wait, which must end at once rather than at its timeout.
    @Test(.timeLimit(.minutes(1)))
    func aCancelledWaitForTheFleetEndsAtOnceAndSaysNo() async throws {
        let db = try await StoreDatabase.make("fleet_cancelled_wait", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .seconds(600))
        let started = Completion()
        let waiter = Task {
            started.finish()
            return await fleet.waitUntil(timeout: .seconds(3600)) { _ in false }
        }
        await started.wait()
        waiter.cancel()
        #expect(await waiter.value == false)
        // Cancelled before it began to wait, too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await fleet.waitUntil(timeout: .seconds(3600)) { _ in false }
        }
        #expect(await early.value == false)
        await fleet.stop()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func nothingHeldEarlierPinsTheFleetWhenTheDatabaseGoesBackToALowerEpoch() async throws {
        let db = try await StoreDatabase.make("fleet_lower_epoch", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .milliseconds(200))
        // A bogus epoch in the state (as a forged one once was in memory), then a restore to an
        // older state; neither sends a notification, so the poll must find both.
        try await db.sql { try $0.query("UPDATE cutover.migration_state SET epoch = 9223372036854775807") }
        #expect(await fleet.waitForEpoch(.max, timeout: .seconds(10)))
        try await db.sql { try $0.query("UPDATE cutover.migration_state SET epoch = 3, writer_path = 'modern', phase = 'modern'") }
        #expect(await fleet.waitUntil(timeout: .seconds(10)) { $0 == .init(path: .modern, epoch: 3) })
        #expect(fleet.currentPath() == .modern)
        await fleet.stop()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func garbageAndForeignNotificationsChangeNothingAndABurstCostsFewReads() async throws {
        let db = try await StoreDatabase.make("fleet_garbage", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .seconds(600))
        let box = try await runner(db)
        let modern = try await onThread { try box.runner.run(.switchModern).epoch }
        #expect(await fleet.waitForEpoch(modern, timeout: .seconds(10)))
        let readsBefore = fleet.health.reads
        let garbage = ["", "not json", "[1,2]", "null", #"{"plan":null}"#, #"{"plan":"drafts"}"#,
                       #"{"plan":"drafts","writerPath":"sideways","epoch":99}"#,
                       #"{"plan":"drafts","writerPath":"legacy","epoch":"9223372036854775807"}"#,
                       #"{"plan":"drafts","writerPath":"legacy","epoch":-1}"#,
                       #"{"plan":"drafts","writerPath":"legacy","epoch":1e30}"#,
                       #"{"plan":"other","writerPath":"legacy","epoch":9223372036854775807}"#,
                       String(repeating: "{", count: 7000)]
        let burst = (0..<40).flatMap { _ in garbage }
        try await notify(db, burst)
        // The next real change comes after the whole burst, on the same channel.
        let back = try await onThread { try box.runner.run(.switchLegacy).epoch }
        #expect(await fleet.waitUntil(timeout: .seconds(10)) { $0.epoch == back })
        #expect(fleet.current == .init(path: .legacy, epoch: back))
        #expect(fleet.current == (try await stored(db)))
        #expect(fleet.health.isHealthy)
        // One read in flight and one due at most: a burst is far fewer reads than notifications.
        let reads = fleet.health.reads - readsBefore
        #expect(reads >= 1 && reads < burst.count / 5, "\(reads) reads for \(burst.count) notifications")
        await fleet.stop()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aFailedReadIsReportedAndTheFleetRecovers() async throws {
        let db = try await StoreDatabase.make("fleet_read_fails", phase: .expanded)
        let (events, sink) = AsyncStream.makeStream(of: FleetWriterPath.Event.self)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(), plan: "drafts", pollInterval: .seconds(600),
                                                    log: { sink.yield($0) })
        let before = fleet.current
        try await db.sql { try $0.execute(unsafeSQL: "ALTER TABLE cutover.migration_state RENAME TO migration_state_away") }
        try await notify(db, [#"{"plan":"drafts"}"#])
        var failure: (any Error)?
        for await event in events {
            if case .readFailed(let error) = event { failure = error; break }
        }
        #expect(failure != nil)
        #expect(!fleet.health.isHealthy)
        #expect(fleet.health.consecutiveFailures >= 1)
        #expect("\(fleet.health.lastError.map { "\($0)" } ?? "")".contains("migration_state"))
        #expect(fleet.current == before)

        try await db.sql { try $0.execute(unsafeSQL: "ALTER TABLE cutover.migration_state_away RENAME TO migration_state") }
        try await notify(db, [#"{"plan":"drafts"}"#])
        var recovered = false
        for await event in events {
            if case .readRecovered = event { recovered = true; break }
        }
        #expect(recovered)
        #expect(fleet.health.isHealthy)
        await fleet.stop()
        sink.finish()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func theSwitchWaitsForEveryLiveReaderToReadV2() async throws {
        let db = try await StoreDatabase.make("fleet_readers", phase: .expanded)
        let old = try await ReaderRegistration(pool: db.pool, plan: "drafts", instanceID: "old-web-1", applicationName: "web",
                                               applicationVersion: "3.9", formats: [.v1], interval: .milliseconds(200))
        let new = try await ReaderRegistration(pool: db.pool, plan: "drafts", instanceID: "new-web-1", applicationName: "web",
                                               applicationVersion: "4.0", formats: [.v1, .v2], interval: .milliseconds(200))
        // A staleness limit no heartbeat of a loaded machine misses; the old instance is made
        // stale below by its silence being set back, not by waiting for it.
        let staleAfter: Duration = .seconds(300)
        let box = try await runner(db, options: .init(readerStaleAfter: staleAfter))
        let refusal = try await onThread { () -> StepRefusal? in
            do { _ = try box.runner.run(.switchModern); return nil } catch let refusal as StepRefusal { return refusal }
        }
        let failed = try #require(refusal?.failedChecks.first { $0.name == "live readers understand v2" })
        #expect(failed.observed == "1 of 2 live lack v2: old-web-1 (web 3.9: v1)")
        // The old instance stops heartbeating, none of its heartbeats still in flight; once it is
        // stale the switch may go ahead. Its last heartbeat is set back past the limit.
        await old.abandon()
        #expect(try await eventually(pause: .milliseconds(50)) {
            try await db.sql { connection in
                try connection.execute(unsafeSQL: "UPDATE cutover.readers SET last_seen_at = now() - interval '1 hour' WHERE instance_id = 'old-web-1'")
                return try ReaderRegistry.list(plan: "drafts", staleAfter: staleAfter, on: connection)
            }.contains { $0.instanceID == "old-web-1" && !$0.isLive }
        }, "old-web-1 never went stale")
        let report = try await onThread { try box.runner.run(.switchModern) }
        #expect(report.to == .modern)
        let listed = try await db.sql { try ReaderRegistry.list(plan: "drafts", staleAfter: staleAfter, on: $0) }
        #expect(listed.map(\.instanceID) == ["new-web-1", "old-web-1"])
        #expect(listed.map(\.isLive) == [true, false])
        try await new.stop()
        #expect(try await db.sql { try ReaderRegistry.list(plan: "drafts", on: $0).map(\.instanceID) } == ["old-web-1"])
        await db.close()
    }

    @Test func plainSQLHeartbeatsRegisterAReader() async throws {
        let db = try await StoreDatabase.make("fleet_plain_sql", phase: .baseline)
        try await db.sql { try $0.execute(unsafeSQL: "SELECT cutover.reader_heartbeat('py-worker-1', 'report-worker', '1.2.0', ARRAY['v1'], 'a secret of 16 or more')") }
        let readers = try await db.sql { try ReaderRegistry.list(plan: "drafts", on: $0) }
        #expect(readers.count == 1)
        #expect(readers.first?.formats == ["v1"])
        #expect(readers.first?.readsV2 == false)
        #expect(readers.first?.isLive == true)
        await db.close()
    }
}

/// Carries a runner to the threads a test runs it on; used by one thread at a time.
final class PhaseRunnerBox: @unchecked Sendable {
    // Safe because each test awaits every use before the next: the runner and its connection
    // are never used by two threads at once.
    let runner: PhaseRunner
    init(_ runner: PhaseRunner) { self.runner = runner }
}
