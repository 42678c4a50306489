import CommandLineKit
import Cutover
import CutoverPostgres
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Synchronization

/// `phase soak`: saves under faults, across writer switches and a backfill, then the invariants.
///
/// Three application instances save through a loopback proxy that can lose the reply to a
/// commit, while a fault injector terminates their backends, loses replies, and (when the
/// cluster is the soak's own) restarts the server with an immediate shutdown; the writer path
/// switches back and forth all the while and a backfill runs halfway. Every unknown outcome is
/// retried with the same operation ID until the ledger answers. At the end the database is
/// checked against what the instances were told, and every instance must have followed every
/// change of the writer path. With `--neighbour`, hostile neighbours (``SoakNeighbour``) run
/// beside the fleet all the while.
///
/// Why it is a command of `phase`, the operator's tool, and not a development executable like
/// `cutover-bench`: an operator about to trust a migration to a server runs it there first.
/// `phase soak --database-url URL --application-url POOLER` puts the library's saves and the
/// runner's switches through that server, that pooler and that network under faults, in a
/// scratch database it drops at the end, and says whether every acknowledged save is there
/// exactly once; that is the promise the migration rests on, checked where it will be kept. It
/// disturbs nothing else: it terminates only its own instances' sessions, and restarts only a
/// cluster it started itself. The fault tools it uses (`PostgresFaults`) stay out of what
/// applications link; `phase` links them, as it links the demo's ephemeral cluster.
struct SoakCommand: PhaseCommand {
    /// `soak --duration`
    static let duration = Option("duration", type: .duration(in: .seconds(5) ... .seconds(86_400)), default: .seconds(30),
                                 valueName: "duration", help: "How long to save under faults.")
    /// `soak --neighbour`
    static let neighbour = Option(
        "neighbour", type: .choice(SoakNeighbour.self), valueName: "kind", isRepeatable: true,
        help: "A hostile neighbour to run beside the fleet, repeatable: forge-notify sends forged and garbage notifications on the fleet's channel at random moments; squat is a role with the application's grants that holds the old runner lock and tries to take or forge the runner's lease, the writer path, the history, the outcome counts, the ledger and other instances' registrations.")
    static let spec = CommandSpec(
        "soak", abstract: "Save under injected faults across writer switches and a backfill, then check nothing was lost or done twice.",
        discussion: "Terminates backends, loses replies to commits through a loopback proxy, and restarts the server with an immediate shutdown when the cluster is its own, while three instances save and retry unknown outcomes with the same operation ID. Exits non-zero on any violation, a failed save and an instance that did not follow a switch included.",
        parameters: [DemoCommand.rows, Self.duration, DemoCommand.applicationURL, Self.neighbour], command: Self.self)

    let context: PhaseContext
    let rows: Int
    let duration: Duration
    let applicationURL: String?
    /// The hostile neighbours asked for, each once.
    let neighbours: [SoakNeighbour]

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        rows = parsed[DemoCommand.rows]
        duration = parsed[Self.duration]
        applicationURL = parsed[DemoCommand.applicationURL]
        var seen: [SoakNeighbour] = []
        for neighbour in parsed.values(of: Self.neighbour) where !seen.contains(neighbour) { seen.append(neighbour) }
        neighbours = seen
    }

    var stopEffect: StopEffect { .throwawayRemoved }

    /// Things that happened, by kind: faults injected, a neighbour's actions, the fleet's events.
    final class FaultCounts: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        func add(_ kind: String, _ count: Int = 1) { counts.withLock { $0[kind, default: 0] += count } }
        var all: [String: Int] { counts.withLock { $0 } }
    }

    func run() async throws -> ExitCode {
        let context = context
        let place = try await ThrowawayDatabase.prepare(on: context.databaseURL, label: "soak",
                                                        isDurable: true, note: { context.note($0) })
        // Durable commits: an immediate shutdown must not lose what was acknowledged. On a
        // server that is not the soak's own, restarts are skipped.
        let url = place.url
        let cluster = place.cluster
        let cleanup = place.cleanup
        let done = Cleanup(cleanup)
        let signals = done.onInterrupt()
        defer {
            signals.forEach { $0.cancel() }
            done.run()
        }
        let application = try place.applicationURL(applicationURL, label: "soak")
        let result = try await soak(url: url, applicationURL: application, cluster: cluster)
        context.console.printResult(result, format: context.format)
        return result.exitCode
    }

    /// - Parameter applicationURL: where the instances' saves go (through the lossy proxy), when
    ///   not to `url` itself: a pooler in front of the same server.
    private func soak(url: String, applicationURL: String?, cluster: EphemeralCluster?) async throws -> SoakResult {
        let direct = PostgresConfiguration(connectionString: url, applicationName: "cutover-soak", connectTimeout: .seconds(10))
        let rows = rows
        try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: direct)
            try DemoData.createLegacyTable(rows: rows, on: connection)
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(), options: .init(forceReaders: true))
            try runner.initialize()
            try runner.run(.expand)
        }
        guard var components = URLComponents(string: applicationURL ?? url) else {
            throw CommandFailure("soak needs a postgresql:// URL to put its proxy in front of", exitCode: .usage)
        }
        let proxy = try LossyProxy(targetHost: components.host ?? "127.0.0.1", targetPort: components.port ?? 5432)
        components.host = "127.0.0.1"
        components.port = proxy.port
        let proxied = PostgresConfiguration(connectionString: components.string, connectTimeout: .seconds(10))

        let ledger = FleetLedger()
        let fleetEvents = FaultCounts()
        var fleet: [ModernApplicationInstance] = []
        for index in 1...3 {
            fleet.append(try await ModernApplicationInstance.start(name: "soak-app-\(index)", configuration: proxied,
                                                                   listenTo: applicationURL.map { _ in direct },
                                                                   fleetEvents: { _, event in fleetEvents.add(Self.kind(of: event)) }))
        }
        let instances = fleet
        fleet.forEach { $0.startLoad(drafts: rows, ledger: ledger) }
        let following = SwitchFollowing(configuration: direct)
        await following.start(instances)
        context.note("3 instances saving through a lossy proxy\(applicationURL == nil ? "" : " and --application-url (LISTEN direct)"); "
                     + "faults every few hundred milliseconds for \(DurationText.format(duration))")

        let faults = FaultCounts()
        let stop = Completion()
        let injector = JoinedThread(named: "cutover-soak-faults")
        injector.start { Self.injectFaults(direct: direct, proxy: proxy, cluster: cluster, faults: faults, until: stop) }
        let neighbourCounts = FaultCounts()
        let neighbours = neighbours.map { neighbour in
            context.note("hostile neighbour: \(neighbour.rawValue)")
            return neighbour.start(configuration: direct, counts: neighbourCounts, until: stop, limit: duration + .seconds(60))
        }

        // The writer path switches back and forth; a backfill runs halfway. Each step is chosen
        // from the phase the database holds, since one that failed around its COMMIT may have
        // happened all the same. A soak whose faults made every switch fail within its
        // duration goes on, for a minute at most, until one is through: a soak without a
        // switch has not shown that the fleet follows one.
        let started = ContinuousClock.now
        var switches = 0
        var backfilled = false
        while ContinuousClock.now - started < duration || (switches == 0 && ContinuousClock.now - started < duration + .seconds(60)) {
            try await Task.sleep(for: .seconds(2))
            // Not before every instance has saved down the path it holds: the verdict asks each
            // stretch of one path for saves, which a loaded machine may take longer to send.
            await following.waitForSavesOnHeldPath(instances, timeout: .seconds(30))
            let isHalfway = ContinuousClock.now - started > duration / 2
            do {
                let phase = try await runOnDedicatedThread {
                    try PhaseRunner(connection: try PostgresConnection(configuration: direct), source: try PlanSource.builtIn()).state().phase
                }
                if phase == .backfilled { backfilled = true }
                let step: PhaseStep = phase == .expanded ? .switchModern : phase == .modern && isHalfway && !backfilled ? .backfill : .switchLegacy
                try await following.step(step.name, instances) {
                    try await runOnDedicatedThread {
                        let runner = PhaseRunner(connection: try PostgresConnection(configuration: direct), source: try PlanSource.builtIn(),
                                                 options: .init(forceReaders: true))
                        _ = try runner.run(step)
                    }
                }
                if step == .backfill { backfilled = true } else { switches += 1 }
                context.note("\(step.name) done (\(switches) switches so far)")
            } catch {
                context.note("a step failed under the faults, trying again: \(error)")
            }
        }
        // The stretch after the last switch asks for saves too, so give it its turn.
        await following.waitForSavesOnHeldPath(instances, timeout: .seconds(30))
        stop.finish()
        // Let the last restart finish before the instances resolve their last saves.
        await injector.ended.wait()
        for neighbour in neighbours { await neighbour.ended.wait() }
        for instance in fleet where !(await finishes(within: .seconds(60), { await instance.stopLoad() })) {
            context.note("\(instance.name) did not finish its last save within 60s")
            ledger.record(LoadFailure(kind: .unanswered, code: "load still running after 60s"))
        }
        await following.finish(instances)
        var counts: [SavePath: [SaveOutcome: Int]] = [:]
        var calls = 0
        for instance in fleet {
            let tally = await instance.router.counts
            for path in SavePath.allCases {
                calls += tally.calls(on: path)
                for (outcome, count) in tally.outcomes(on: path) { counts[path, default: [:]][outcome, default: 0] += count }
            }
        }
        for instance in fleet where !(await finishes(within: .seconds(20), { await instance.shutdown() })) {
            context.note("\(instance.name) did not shut down within 20s; leaving it to the process's exit")
        }
        proxy.stop()
        var invariants = try await runOnDedicatedThread {
            try DemoVerification.verify(ledger, following: following, seededDrafts: rows, drill: false, contracted: false,
                                        faultsInjected: true, on: PostgresConnection(configuration: direct))
        }
        if self.neighbours.contains(.squat) {
            let squatted = neighbourCounts.all
            let through = squatted["squatter write went through"] ?? 0
            let refused = squatted["squatter refused"] ?? 0
            invariants.append(DemoInvariant(
                name: "the application role got nothing through", holds: through == 0 && refused > 0,
                detail: "\(refused) attempts refused, \(through) went through"
                    + (squatted["squatter unavailable (it needs a role it may create)"] != nil ? "; the squatter could not run" : "")))
        }
        var all = faults.all
        all["lost reply"] = proxy.lostReplyCount
        return SoakResult(operations: calls, acknowledged: ledger.acknowledged.count,
                          replays: counts.values.map { $0[.replayed] ?? 0 }.reduce(0, +),
                          conflicts: ledger.retries.conflicts, retriedUnknown: ledger.retries.unknown,
                          switches: switches, backfilled: backfilled, faults: all, neighbours: neighbourCounts.all,
                          fleetEvents: fleetEvents.all, invariants: invariants)
    }

    /// How the result counts a fleet writer path's event.
    private static func kind(of event: FleetWriterPath.Event) -> String {
        switch event {
        case .changed: "path changed"
        case .readFailed: "read failed"
        case .readRecovered: "read recovered"
        case .listenerLost: "listener lost"
        case .pollingOnly: "polling only"
        }
    }

    /// Terminates backends, loses replies and restarts the server until told to stop.
    private static func injectFaults(direct: PostgresConfiguration, proxy: LossyProxy, cluster: EphemeralCluster?,
                                     faults: FaultCounts, until stop: Completion) {
        var connection: PostgresConnection?
        var lastRestart = ContinuousClock.now
        while !stop.isFinished {
            Thread.sleep(forTimeInterval: Double.random(in: 0.2...0.5))
            if let cluster, ContinuousClock.now - lastRestart > .seconds(8) {
                connection = nil
                if (try? cluster.restartImmediately()) != nil { faults.add("server restart") }
                lastRestart = ContinuousClock.now
                continue
            }
            if Bool.random() {
                proxy.loseNextReplyToCommit()
                continue
            }
            do {
                if connection == nil || connection?.isConnected == false { connection = try PostgresConnection(configuration: direct) }
                if try BackendTerminator.terminate(applicationNameLike: "soak-app-%", on: connection!) > 0 { faults.add("backend terminated") }
            } catch {
                connection = nil
            }
        }
    }
}

struct SoakResult: CommandResult {
    let operations: Int
    let acknowledged: Int
    let replays: Int
    let conflicts: Int
    let retriedUnknown: Int
    let switches: Int
    let backfilled: Bool
    let faults: [String: Int]
    /// What the hostile neighbours did, by kind.
    let neighbours: [String: Int]
    /// What the instances' fleet writer paths reported, by kind.
    let fleetEvents: [String: Int]
    let invariants: [DemoInvariant]

    var violations: Int { invariants.filter { !$0.holds }.count }

    /// Done only without a violation.
    var exitCode: ExitCode { violations == 0 ? .done : .error }

    private static func counted(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    var text: String {
        var lines = ["operations \(operations), commits acknowledged \(acknowledged), replays \(replays), conflicts \(conflicts), "
                     + "outcomeUnknown retried \(retriedUnknown)",
                     "writer switches \(switches), backfill \(backfilled ? "done" : "not reached")",
                     "faults: " + Self.counted(faults),
                     "hostile neighbours: " + Self.counted(neighbours),
                     "fleet writer paths: " + Self.counted(fleetEvents)]
        lines += invariants.map { "\($0.holds ? "ok    " : "FAILED") \($0.name): \($0.detail)" }
        lines.append("violations \(violations)")
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        ["operations": .integer(Int64(operations)), "commits": .integer(Int64(acknowledged)), "replays": .integer(Int64(replays)),
         "conflicts": .integer(Int64(conflicts)), "outcomeUnknownRetried": .integer(Int64(retriedUnknown)),
         "switches": .integer(Int64(switches)), "backfilled": .bool(backfilled),
         "faults": .object(faults.mapValues { .integer(Int64($0)) }),
         "neighbours": .object(neighbours.mapValues { .integer(Int64($0)) }),
         "fleetEvents": .object(fleetEvents.mapValues { .integer(Int64($0)) }),
         "invariants": .array(invariants.map { ["name": .string($0.name), "holds": .bool($0.holds), "detail": .string($0.detail)] }),
         "violations": .integer(Int64(violations))]
    }
}
