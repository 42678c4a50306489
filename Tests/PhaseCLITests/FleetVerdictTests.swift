import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
@testable import PhaseCLI
import Testing

/// The demo's and the soak's judge, shown to fail on broken data: saves that failed, and
/// instances that did not follow a switch, are violations and make the run exit non-zero.
@Suite("Fleet verdict", .timeLimit(.minutes(3)))
struct FleetVerdictTests {
    private static let drafts = 20

    /// A database with the legacy table seeded, the control schema, and the plan taken through `steps`.
    private func database(_ label: String, steps: [PhaseStep]) async throws -> TestDatabase {
        let database = try await TestPostgres.database(label)
        try await onThread {
            let connection = try database.connect()
            try DemoData.createLegacyTable(rows: Self.drafts, on: connection)
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(), options: .init(forceReaders: true))
            try runner.initialize()
            for step in steps { _ = try runner.run(step) }
        }
        return database
    }

    private func run(_ step: PhaseStep, on database: TestDatabase) async throws {
        try await onThread {
            _ = try PhaseRunner(connection: try database.connect(), source: try PlanSource.builtIn(),
                                options: .init(forceReaders: true)).run(step)
        }
    }

    private func verdict(_ ledger: FleetLedger, _ following: SwitchFollowing, faultsInjected: Bool,
                         on database: TestDatabase) async throws -> [DemoInvariant] {
        try await onThread {
            try DemoVerification.verify(ledger, following: following, seededDrafts: Self.drafts, drill: false, contracted: false,
                                        faultsInjected: faultsInjected, on: try database.connect())
        }
    }

    private func soakResult(_ invariants: [DemoInvariant]) -> SoakResult {
        SoakResult(operations: 0, acknowledged: 0, replays: 0, conflicts: 0, retriedUnknown: 0, switches: 1, backfilled: false,
                   faults: [:], neighbours: [:], fleetEvents: [:], invariants: invariants)
    }

    private func demoResult(_ invariants: [DemoInvariant]) -> DemoResult {
        DemoResult(invariants: invariants, counts: [:], acknowledged: 0, legacyWrites: 0, retriedUnknown: 0, conflicts: 0, steps: [])
    }

    @Test func anInstanceThatDoesNotFollowASwitchIsAViolationAndFailsTheRun() async throws {
        let database = try await database("verdict_unfollowing", steps: [.expand])
        let configuration = database.configuration()
        var instances: [ModernApplicationInstance] = []
        for name in ["follows", "pinned", "deaf"] {
            instances.append(try await ModernApplicationInstance.start(name: name, configuration: configuration))
        }
        let fleet = instances
        // As an instance that took a forged notification under the old rule would: stuck on legacy.
        await fleet[1].router.follow(SettableWriterPath(.legacy))
        let following = SwitchFollowing(configuration: configuration, bound: .seconds(2))
        await following.start(fleet)
        // And one whose writer path stopped following anything.
        await fleet[2].fleet.stop()
        let ledger = FleetLedger()
        for instance in fleet { await instance.edit(sequence: 1, drafts: Self.drafts, ledger: ledger) }
        try await following.step("switch modern", fleet) { try await run(.switchModern, on: database) }
        for instance in fleet {
            for sequence in 2...3 { await instance.edit(sequence: sequence, drafts: Self.drafts, ledger: ledger) }
        }
        await following.finish(fleet)

        let problems = following.problems
        #expect(problems.contains("pinned sent 2 saves down legacy after switch modern (writer modern, epoch 2)"), "\(problems)")
        #expect(problems.contains("pinned sent no save down modern after switch modern"), "\(problems)")
        #expect(problems.contains("deaf did not hold writer modern, epoch 2 within 2s after switch modern"), "\(problems)")
        #expect(problems.contains("deaf sent 2 saves down legacy after switch modern (writer modern, epoch 2)"), "\(problems)")
        #expect(problems.contains("deaf sent no save down modern after switch modern"), "\(problems)")
        #expect(problems.count == 5, "\(problems)")
        #expect(!problems.contains { $0.hasPrefix("follows") }, "\(problems)")

        let invariants = try await verdict(ledger, following, faultsInjected: false, on: database)
        let failed = invariants.filter { !$0.holds }.map(\.name)
        #expect(failed == ["every instance followed every switch"], "\(invariants)")
        #expect(soakResult(invariants).violations == 1)
        #expect(soakResult(invariants).exitCode == .error)
        #expect(demoResult(invariants).exitCode == .error)
        #expect(demoResult(invariants).text.contains("FAILED every instance followed every switch: 5 problems"))
        for instance in fleet { await instance.shutdown() }
    }

    @Test func aSaveOnAPathTheTableDoesNotHoldIsAFailedSaveAndFailsTheRun() async throws {
        // Before expand, where a forged "modern" taken by the old rule would have sent saves.
        let database = try await database("verdict_failed_saves", steps: [])
        let instance = try await ModernApplicationInstance.start(name: "pinned-modern", configuration: database.configuration())
        await instance.router.follow(SettableWriterPath(.modern))
        let ledger = FleetLedger()
        await instance.edit(sequence: 1, drafts: Self.drafts, ledger: ledger)
        #expect(ledger.failures == [LoadFailure(kind: .refused, code: "formatNotStored"): 1])
        #expect(ledger.acknowledged.isEmpty)

        let demo = DemoVerification.load(ledger, faultsInjected: false)
        #expect(!demo.holds)
        #expect(demo.detail == "1 failed attempts: refused formatNotStored 1")
        let soak = DemoVerification.load(ledger, faultsInjected: true)
        #expect(!soak.holds)
        #expect(soakResult([soak]).exitCode == .error)
        #expect(demoResult([demo]).exitCode == .error)
        await instance.shutdown()
    }

    @Test func lostAttemptsFailTheDemoButNotASoakThatInjectsFaults() {
        let ledger = FleetLedger()
        #expect(ledger.record(SaveFailure.conflict(expected: 1, current: 2)) == nil)
        #expect(ledger.record(SaveFailure.outcomeUnknown) == LoadFailure(kind: .lost, code: "outcomeUnknown"))
        #expect(ledger.record(PostgresError(code: .connectionLost, message: "server closed the connection"))?.kind == .lost)
        #expect(ledger.record(DraftStoreError.lockTimeout)?.kind == .lost)
        #expect(ledger.retries == (unknown: 1, conflicts: 1))
        #expect(!DemoVerification.load(ledger, faultsInjected: false).holds)
        #expect(DemoVerification.load(ledger, faultsInjected: true).holds)

        #expect(ledger.record(PostgresError(code: .server, message: "column \"title\" does not exist", sqlState: .undefinedColumn))
            == LoadFailure(kind: .refused, code: "SQLSTATE 42703"))
        #expect(ledger.record(SaveFailure.notFound)?.kind == .refused)
        ledger.record(LoadFailure(kind: .unanswered, code: "load still running after 60s"))
        let soak = DemoVerification.load(ledger, faultsInjected: true)
        #expect(!soak.holds)
        #expect(soak.detail == "3 failed saves: refused SQLSTATE 42703 1, refused notFound 1, unanswered load still running after 60s 1")
    }
}
