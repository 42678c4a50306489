import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

/// "fleet switch, 16 listeners": how long after an operator starts `phase switch` every
/// application instance's router takes the new writer path, p99 over many switches.
///
/// Each member is what an instance runs: a ``FleetWriterPath`` (its own LISTEN connection and
/// its own pool for re-reading the state), the source a `SaveRouter` reads before every
/// operation, so the router switches exactly when the member does. Each switch is a real one:
/// `PhaseRunner` running `switch modern` and `switch legacy` in turn on the built-in drafts plan,
/// with its lock, checks, history and the NOTIFY it commits with the change. The clock starts
/// before the runner does, so the figure includes the runner's own work, not only the
/// notification's travel.
struct FleetSwitchScenario {
    let server: BenchServer
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_fleet"

    func run() async throws -> [ScenarioResult] {
        let database = try await BenchDatabase.create(Self.databaseName, on: server)
        let fleetSwitch = RunnerFleetSwitch(configuration: database.configuration)
        try await fleetSwitch.prepare()
        let members = (0..<options.listeners).map {
            RouterFleetMember(configuration: database.configuration, instanceID: "bench-instance-\($0 + 1)")
        }
        let result = try await measure(members: members, fleetSwitch: fleetSwitch)
        for member in members { await member.stop() }
        await database.drop()
        return [result]
    }

    /// Switches `options.lengths.switches` times, alternating the path, and times each until every
    /// member has taken it.
    func measure(members: [any FleetMember], fleetSwitch: any FleetSwitch) async throws -> ScenarioResult {
        for member in members { try await member.start() }
        let tally = SwitchTally(members: members.count)
        let following = Task {
            await withTaskGroup(of: Void.self) { group in
                for member in members {
                    group.addTask { await member.follow { epoch in tally.seen(epoch) } }
                }
            }
        }
        defer { following.cancel() }
        log.step("fleet switch, \(members.count) listeners: \(options.lengths.switches) switches")

        var milliseconds: [Double] = []
        var runnerMilliseconds: [Double] = []
        let warmUp = 5
        for index in 1...(options.lengths.switches + warmUp) {
            let sent = ContinuousClock.now
            let epoch = try await fleetSwitch.switchWriterPath(modern: !index.isMultiple(of: 2))
            let committed = ContinuousClock.now
            let giveUp = Task {
                try await Task.sleep(for: .seconds(15))
                tally.giveUp(on: epoch)
            }
            let everyoneSaw = await tally.waitUntilEveryoneHasSeen(epoch)
            giveUp.cancel()
            guard everyoneSaw else { throw BenchError("switch to epoch \(epoch) did not reach every member within 15 s") }
            // The first few let every listener settle and are not counted.
            if index > warmUp {
                milliseconds.append((ContinuousClock.now - sent).milliseconds)
                runnerMilliseconds.append((committed - sent).milliseconds)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let latencies = Latencies(milliseconds: milliseconds)
        let runner = Latencies(milliseconds: runnerMilliseconds)
        return ScenarioResult(
            scenario: "fleet switch, \(members.count) listeners", unit: "ms", ours: latencies.percentile(0.99) ?? 0,
            goal: .valueBelow(100), latencyOurs: latencies.summary, rows: milliseconds.count,
            duration: milliseconds.reduce(0, +) / 1000,
            extra: ["runner_p50_ms": runner.percentile(0.5) ?? 0, "runner_p99_ms": runner.percentile(0.99) ?? 0],
            settings: "p99 of \(milliseconds.count) switches, from starting PhaseRunner's switch until every member's FleetWriterPath has taken it",
            notes: ["members: FleetWriterPath each (what SaveRouter reads); switch: PhaseRunner switch modern / switch legacy, "
                + "p50 \(Format.milliseconds(runner.percentile(0.5))) and p99 \(Format.milliseconds(runner.percentile(0.99))) of it the runner's own work"])
    }
}

/// One member of the fleet: an application instance following the writer path.
protocol FleetMember: Sendable {
    /// Starts following; later switches reach it.
    func start() async throws
    /// Calls `seen` with each epoch as the member takes it, until stopped or cancelled.
    func follow(_ seen: @escaping @Sendable (Int64) -> Void) async
    func stop() async
}

/// What switches the fleet's writer path.
protocol FleetSwitch: Sendable {
    /// Switches to the modern path (or back) and returns the epoch it committed.
    func switchWriterPath(modern: Bool) async throws -> Int64
}

/// An application instance: registered as a reader of v1 and v2 (`switch modern` checks that
/// every live reader reads v2), and following the writer path with a ``FleetWriterPath``.
final class RouterFleetMember: FleetMember {
    private let configuration: PostgresConfiguration
    private let instanceID: String
    private let parts = Mutex<(fleet: FleetWriterPath, registration: ReaderRegistration, pool: PostgresPool)?>(nil)

    init(configuration: PostgresConfiguration, instanceID: String) {
        self.configuration = configuration
        self.instanceID = instanceID
    }

    func start() async throws {
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: instanceID, applicationName: "cutover-bench",
                                                        applicationVersion: "1", formats: [.v1, .v2])
        let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts")
        parts.withLock { $0 = (fleet, registration, pool) }
    }

    func follow(_ seen: @escaping @Sendable (Int64) -> Void) async {
        guard let fleet = parts.withLock({ $0?.fleet }) else { return }
        var next = fleet.current.epoch + 1
        while !Task.isCancelled {
            guard await fleet.waitForEpoch(next, timeout: .milliseconds(500)) else { continue }
            let reached = fleet.current.epoch
            for epoch in next...max(next, reached) { seen(epoch) }
            next = max(next, reached) + 1
        }
    }

    func stop() async {
        guard let (fleet, registration, pool) = parts.withLock({ $0 }) else { return }
        await fleet.stop()
        try? await registration.stop()
        await pool.shutdown()
    }
}

/// The switch an operator makes: `PhaseRunner` on the built-in drafts plan, after expand.
final class RunnerFleetSwitch: FleetSwitch {
    private let configuration: PostgresConfiguration
    private let connection = Mutex<PostgresConnectionBox?>(nil)

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// The legacy table, the control schema and the plan's state, expanded.
    func prepare() async throws {
        let configuration = configuration
        let opened = try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: configuration)
            try BenchDatabase.createLegacyTable(on: connection)
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn())
            try runner.initialize()
            try runner.run(.expand)
            return PostgresConnectionBox(connection)
        }
        connection.withLock { $0 = opened }
    }

    func switchWriterPath(modern: Bool) async throws -> Int64 {
        guard let box = connection.withLock({ $0 }) else { throw BenchError("the fleet switch was not prepared") }
        return try await runOnDedicatedThread {
            let runner = PhaseRunner(connection: box.connection, source: try PlanSource.builtIn())
            return try runner.run(modern ? .switchModern : .switchLegacy).epoch
        }
    }
}

/// A connection handed between threads one job at a time: each switch runs to completion
/// before the next starts, so the connection is never used by two threads at once.
final class PostgresConnectionBox: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}

/// Which members have seen which epoch, and who waits for everyone.
final class SwitchTally: Sendable {
    private struct State {
        var seen: [Int64: Int] = [:]
        var waiting: [Int64: CheckedContinuation<Bool, Never>] = [:]
        var abandoned: Set<Int64> = []
    }

    private let members: Int
    private let state = Mutex(State())

    init(members: Int) { self.members = members }

    /// A member has taken `epoch`.
    func seen(_ epoch: Int64) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            state.seen[epoch, default: 0] += 1
            guard state.seen[epoch] == members else { return nil }
            return state.waiting.removeValue(forKey: epoch)
        }
        waiter?.resume(returning: true)
    }

    /// Returns true once every member has taken `epoch`, false if ``giveUp(on:)`` came first.
    func waitUntilEveryoneHasSeen(_ epoch: Int64) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.seen[epoch, default: 0] >= members { return true }
                if state.abandoned.contains(epoch) { return false }
                state.waiting[epoch] = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Stops waiting for `epoch`.
    func giveUp(on epoch: Int64) {
        let waiter = state.withLock { state in
            state.abandoned.insert(epoch)
            return state.waiting.removeValue(forKey: epoch)
        }
        waiter?.resume(returning: false)
    }
}
