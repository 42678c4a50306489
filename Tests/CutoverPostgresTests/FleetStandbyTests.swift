import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// A fleet writer path whose reads go to a hot standby, or that is given no connection for LISTEN.
@Suite("Fleet: polling alone, on a standby or without LISTEN", .timeLimit(.minutes(3)))
struct FleetStandbyTests {
    /// Every event a fleet writer path tells its logger.
    final class Events: Sendable {
        private let events = Mutex<[FleetWriterPath.Event]>([])
        func add(_ event: FleetWriterPath.Event) { events.withLock { $0.append(event) } }
        var all: [FleetWriterPath.Event] { events.withLock { $0 } }
        var pollingOnly: [String] { all.compactMap { if case .pollingOnly(let reason) = $0 { reason } else { nil } } }
        var failures: Int {
            all.filter { event in
                switch event {
                case .readFailed, .listenerLost: true
                case .changed, .readRecovered, .pollingOnly: false
                }
            }.count
        }
    }

    @Test func onAStandbyThePathIsFollowedByPollingWithoutAnErrorEverySecond() async throws {
        let primary = try await EphemeralCluster.start()
        defer { primary.stop() }
        let box = try await onThread { () -> PhaseRunnerBox in
            let connection = try PostgresConnection(configuration: primary.configuration(applicationName: "standby-test-runner"))
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(), options: .init(forceReaders: true))
            try runner.initialize()
            try runner.run(.expand)
            return PhaseRunnerBox(runner)
        }
        let standby = try await primary.startStandby()
        defer { standby.stop() }
        let events = Events()
        // The state reaches the standby by replay; wait for it, bounded.
        var fleet: FleetWriterPath?
        let deadline = ContinuousClock.now + .seconds(90)
        while fleet == nil {
            do {
                fleet = try await FleetWriterPath.start(configuration: standby.configuration(applicationName: "standby-fleet"), plan: "drafts",
                                                        pollInterval: .milliseconds(200), log: events.add)
            } catch PhaseRunnerError.notInitialized {
                guard ContinuousClock.now < deadline else { Issue.record("the standby never replayed the plan's state"); return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let follower = try #require(fleet)
        #expect(events.pollingOnly.count == 1)
        #expect(events.pollingOnly.first?.contains("standby") == true)
        #expect(follower.health.pollingOnlyReason != nil)
        let epoch = try await onThread { try box.runner.run(.switchModern).epoch }
        #expect(await follower.waitForEpoch(epoch, timeout: .seconds(30)))
        #expect(follower.currentPath() == .modern)
        // Several polls later still: no failed read, no lost listener, no LISTEN refused by the standby.
        let reads = follower.health.reads
        let later = ContinuousClock.now + .seconds(90)
        while follower.health.reads < reads + 5, ContinuousClock.now < later { try await Task.sleep(for: .milliseconds(50)) }
        #expect(follower.health.reads >= reads + 5)
        #expect(events.failures == 0)
        #expect(events.pollingOnly.count == 1)
        let log = try String(contentsOfFile: standby.logFile, encoding: .utf8)
        #expect(!log.contains("cannot execute LISTEN"))
        await follower.stop()
    }

    @Test func withoutAConnectionForListenItSaysSoOnceAndFollowsByPolling() async throws {
        let db = try await StoreDatabase.make("fleet_listen_off", phase: .expanded)
        let events = Events()
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "fleet-no-listen"), plan: "drafts",
                                                    listening: .off, pollInterval: .milliseconds(200), log: events.add)
        #expect(events.pollingOnly == ["no connection for LISTEN was given"])
        #expect(!fleet.health.isListening)
        let listening = try await db.sql {
            try $0.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'fleet-no-listen' AND query LIKE 'LISTEN%'")[0]
                .decode(Int.self, "n")
        }
        #expect(listening == 0)
        let database = db.database
        let epoch = try await onThread {
            try PhaseRunner(connection: database.connect(), source: PlanSource.builtIn(), options: .init(forceReaders: true))
                .run(.switchModern).epoch
        }
        #expect(await fleet.waitForEpoch(epoch, timeout: .seconds(10)))
        #expect(events.failures == 0)
        await fleet.stop()
        await db.close()
    }

    @Test func aSeparateDirectConnectionCarriesListen() async throws {
        let db = try await StoreDatabase.make("fleet_listen_direct", phase: .expanded)
        let fleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "fleet-reads"), plan: "drafts",
                                                    listening: .direct(db.database.configuration(applicationName: "fleet-listen")),
                                                    pollInterval: .seconds(600))
        let deadline = ContinuousClock.now + .seconds(60)
        while !fleet.health.isListening, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(fleet.health.isListening)
        let database = db.database
        let epoch = try await onThread {
            try PhaseRunner(connection: database.connect(), source: PlanSource.builtIn(), options: .init(forceReaders: true))
                .run(.switchModern).epoch
        }
        // The poll is ten minutes away: only the notification on the LISTEN connection brings it.
        #expect(await fleet.waitForEpoch(epoch, timeout: .seconds(10)))
        await fleet.stop()
        await db.close()
    }
}
