import Foundation
import PostgresClient
import Synchronization

/// "fleet switch, 16 listeners": how long after a writer-path switch is sent every member of
/// the fleet has seen it, p99 over many switches.
///
/// The members and the switch are behind ``FleetMember`` and ``FleetSwitch``, so that the
/// scenario measures whatever stands behind them: today a ``PostgresListener`` per member on
/// the `cutover_state` channel and one `pg_notify` in a committed transaction, the mechanism
/// the fleet writer path rides on; with the fleet listener, a member per `WriterPathSource`
/// and the switch `phase switch` makes.
struct FleetSwitchScenario {
    let server: BenchServer
    let options: BenchOptions
    let log: ProgressLog

    static let databaseName = "cutover_bench_fleet"

    func run() async throws -> [ScenarioResult] {
        let database = try await BenchDatabase.create(Self.databaseName, on: server)
        let members = (0..<options.listeners).map { _ in ListenerFleetMember(configuration: database.configuration) }
        let fleetSwitch = NotifyFleetSwitch(configuration: database.configuration)
        let result = try await measure(members: members, fleetSwitch: fleetSwitch)
        await database.drop()
        return [result]
    }

    /// Switches `options.switches` times, alternating the path, and times each until every
    /// member has seen it.
    func measure(members: [any FleetMember], fleetSwitch: any FleetSwitch) async throws -> ScenarioResult {
        let tally = SwitchTally(members: members.count)
        let following = Task {
            await withTaskGroup(of: Void.self) { group in
                for member in members {
                    group.addTask { await member.follow { epoch in tally.seen(epoch) } }
                }
            }
        }
        defer {
            for member in members { member.stop() }
            following.cancel()
        }
        for member in members { try await member.waitUntilFollowing() }
        try await fleetSwitch.prepare()
        log.step("fleet switch, \(members.count) listeners: \(options.switches) switches")

        var milliseconds: [Double] = []
        let total = options.switches + 5
        for epoch in 1...Int64(total) {
            let sent = ContinuousClock.now
            try await fleetSwitch.switchWriterPath(epoch: epoch, modern: epoch.isMultiple(of: 2) == false)
            let giveUp = Task {
                try await Task.sleep(for: .seconds(10))
                tally.giveUp(on: epoch)
            }
            let everyoneSaw = await tally.waitUntilEveryoneHasSeen(epoch)
            giveUp.cancel()
            guard everyoneSaw else { throw BenchError("switch \(epoch) did not reach every member within 10 s") }
            // The first few warm the connections up and are not counted.
            if epoch > 5 { milliseconds.append((ContinuousClock.now - sent).milliseconds) }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await fleetSwitch.finish()
        let latencies = Latencies(milliseconds: milliseconds)
        return ScenarioResult(
            scenario: "fleet switch, \(members.count) listeners", unit: "ms", ours: latencies.percentile(0.99) ?? 0,
            goal: .valueBelow(100), latencyOurs: latencies.summary, rows: milliseconds.count,
            duration: milliseconds.reduce(0, +) / 1000,
            settings: "p99 of \(milliseconds.count) switches, from sending the switch until every member has seen it",
            notes: ["\(type(of: members[0])) members, \(type(of: fleetSwitch)): the mechanism, until the fleet listener lands"])
    }
}

/// One member of the fleet: an application instance following the writer path.
protocol FleetMember: Sendable {
    /// Returns once the member will see every later switch.
    func waitUntilFollowing() async throws
    /// Calls `seen` with each switch's epoch as the member takes it, until stopped.
    func follow(_ seen: @escaping @Sendable (Int64) -> Void) async
    func stop()
}

/// What switches the fleet's writer path.
protocol FleetSwitch: Sendable {
    func prepare() async throws
    /// Switches to the modern path (or back) as epoch `epoch`, and returns once committed.
    func switchWriterPath(epoch: Int64, modern: Bool) async throws
    func finish() async throws
}

/// A member that listens on `cutover_state` itself and reads the epoch from the payload.
final class ListenerFleetMember: FleetMember {
    private let listener: PostgresListener
    private let listening = Mutex<[CheckedContinuation<Void, Never>]?>([])

    init(configuration: PostgresConfiguration) {
        listener = PostgresListener(configuration: configuration, channels: [NotifyFleetSwitch.channel])
    }

    func waitUntilFollowing() async throws {
        await withCheckedContinuation { continuation in
            let waiting = listening.withLock { waiters in
                guard waiters != nil else { return false }
                waiters!.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    func follow(_ seen: @escaping @Sendable (Int64) -> Void) async {
        for await event in listener.events {
            switch event {
            case .listening:
                let waiters = listening.withLock { waiters in
                    defer { waiters = nil }
                    return waiters ?? []
                }
                waiters.forEach { $0.resume() }
            case .notification(let notification):
                if let epoch = NotifyFleetSwitch.epoch(in: notification.payload) { seen(epoch) }
            case .connectionLost:
                break
            }
        }
    }

    func stop() { listener.stop() }
}

/// The switch as `phase switch` announces it: `pg_notify('cutover_state', payload)` in a
/// committed transaction, the payload `{plan, writerPath, epoch, phase}`.
final class NotifyFleetSwitch: FleetSwitch {
    static let channel = "cutover_state"
    private let configuration: PostgresConfiguration
    private let connection = Mutex<PostgresConnectionBox?>(nil)

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    func prepare() async throws {
        let configuration = configuration
        let opened = try await runOnDedicatedThread { PostgresConnectionBox(try PostgresConnection(configuration: configuration)) }
        connection.withLock { $0 = opened }
    }

    func switchWriterPath(epoch: Int64, modern: Bool) async throws {
        guard let box = connection.withLock({ $0 }) else { throw BenchError("the fleet switch was not prepared") }
        let payload = #"{"plan":"drafts","writerPath":"\#(modern ? "modern" : "legacy")","epoch":\#(epoch),"phase":"\#(modern ? "modern" : "expanded")"}"#
        _ = try await runOnDedicatedThread {
            try box.connection.withTransaction { connection in
                try connection.query("SELECT pg_notify(\(Self.channel), \(payload))")
            }
        }
    }

    func finish() async throws {
        connection.withLock { $0 = nil }
    }

    /// The epoch of a payload, read the way a member would.
    static func epoch(in payload: String) -> Int64? {
        struct State: Decodable { var epoch: Int64 }
        return try? JSONDecoder().decode(State.self, from: Data(payload.utf8)).epoch
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
