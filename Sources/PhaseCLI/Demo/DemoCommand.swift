import CommandLineKit
import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

/// `phase demo`: a whole migration under a simulated fleet, against a throw-away database.
struct DemoCommand: PhaseCommand {
    /// `demo --rows`, `soak --rows`
    static let rows = Option("rows", type: .integer(in: 10...10_000_000), default: 2000, valueName: "count",
                             help: "How many rows to seed the legacy table with.")
    /// `demo --duration`
    static let duration = Option("duration", type: .duration(in: .seconds(6) ... .seconds(3600)), default: .seconds(18),
                                 valueName: "duration", help: "How long the simulated fleet writes, spread over the phases.")
    /// `demo --application-url`, `soak --application-url`
    static let applicationURL = Option(
        "application-url", type: .string, valueName: "url",
        help: "Where the application instances connect instead of the database itself: a pooler in front of the same server (PgBouncer in transaction mode, say), as a postgresql:// URL whose database name is replaced by the throw-away one. The runner, the checks and LISTEN stay direct.")
    static let spec = CommandSpec(
        "demo", abstract: "Run a whole migration under a simulated fleet, on a throw-away database, and verify it.",
        discussion: "Starts an ephemeral PostgreSQL cluster (or, with --database-url, a scratch database it creates and drops), seeds the reference plan's table, runs old application versions with plain SQL and current instances with the router and the store, walks expand, switch, backfill, a rollback drill and contract, and checks that nothing was lost or done twice. Exits 0 only if every invariant holds. With --plan, it runs that plan instead of the built-in one; it must migrate the same table.",
        parameters: [Self.rows, Self.duration, Self.applicationURL], command: Self.self)

    let context: PhaseContext
    let rows: Int
    let duration: Duration
    let applicationURL: String?

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        rows = parsed[Self.rows]
        duration = parsed[Self.duration]
        applicationURL = parsed[Self.applicationURL]
    }

    var stopEffect: StopEffect { .throwawayRemoved }

    var console: Console { context.console }

    func run() async throws -> ExitCode {
        let context = context
        let place = try await ThrowawayDatabase.prepare(on: context.databaseURL, label: "demo",
                                                        isDurable: false, note: { context.note($0) })
        let cleanup = Cleanup(place.cleanup)
        let signals = cleanup.onInterrupt()
        defer {
            signals.forEach { $0.cancel() }
            cleanup.run()
        }
        let configuration = PostgresConfiguration(connectionString: place.url, connectTimeout: .seconds(10))
        let application = try place.applicationURL(applicationURL, label: "demo")
            .map { PostgresConfiguration(connectionString: $0, connectTimeout: .seconds(10)) }
        if application != nil { note("the application instances connect through --application-url; the runner and LISTEN go direct") }
        let result: DemoResult
        do {
            result = try await walk(configuration, application: application)
        } catch {
            // Interrupted: the database went away under the fleet. Leave as the signal says.
            if let signal = StopSignals.shared.received {
                cleanup.run()
                StopSignals.shared.leave(signal)
            }
            throw error
        }
        console.printResult(result, format: context.format)
        return result.exitCode
    }

    private func note(_ line: String) { context.note(line) }

    private func heading(_ text: String) { context.note("== \(text)") }

    /// The migration, step by step, under load.
    ///
    /// - Parameter application: where the instances connect, when not to `configuration` (a pooler).
    private func walk(_ configuration: PostgresConfiguration, application: PostgresConfiguration?) async throws -> DemoResult {
        let rows = rows
        let slice = duration / 6
        try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: configuration)
            try DemoData.createLegacyTable(rows: rows, on: connection)
        }
        note("seeded \(rows) drafts in the legacy table drafts(id, title, revision)")
        let ledger = FleetLedger()
        let runner = try await DemoRunner(configuration: configuration, source: try context.planSource(),
                                          log: { [context] in context.note("   \($0)") })
        try await runner.step("init") { try $0.initialize() }

        heading("fleet: 2 old application versions (plain SQL, read v1) and 3 current instances (router + store, read v1 and v2)")
        let old = (1...2).map {
            OldApplicationInstance(name: "legacy-app-\($0)", configuration: application ?? configuration, drafts: rows, ledger: ledger)
        }
        var modern: [ModernApplicationInstance] = []
        for index in 1...3 {
            modern.append(try await ModernApplicationInstance.start(name: "app-\(index)", configuration: application ?? configuration,
                                                                    listenTo: application.map { _ in configuration },
                                                                    fleetEvents: { [context] name, event in
                if case .changed = event { return }
                context.note("   \(name): \(event)")
            }, logger: context.console.logger(label: "app-\(index)")))
        }
        let fleet = modern
        modern.forEach { $0.startLoad(drafts: rows, ledger: ledger) }
        let following = SwitchFollowing(configuration: configuration)
        await following.start(fleet)
        // Every step is watched: each instance must hold the state it leaves and save on its path.
        let step = { (name: String, body: @escaping @Sendable (PhaseRunner) throws -> Any) async throws in
            try await following.step(name, fleet) { try await runner.step(name, body) }
        }
        try await load(slice, modern, "baseline", on: .legacy)

        heading("rehearse: the whole plan on a scratch copy of the table, beside the live load")
        try await runner.step("rehearse") { runner -> Rehearsal.Report in
            let report = try Rehearsal(connection: runner.connection, source: runner.source).run()
            guard report.verdict == .passed else {
                throw CommandFailure("the rehearsal failed: \(report.findings.first?.message ?? "see phase rehearse")")
            }
            return report
        }

        heading("expand: add the v2 document beside the title")
        try await step("expand") { try $0.run(.expand) }
        try await load(slice, modern, "expanded", on: .legacy)

        heading("retire the old application versions: they read v1 only")
        for instance in old { await instance.retire() }
        note("   \(old.count) old instances stopped and left the reader registry")

        heading("switch the fleet to the modern writer")
        try await step("switch modern") { try $0.run(.switchModern) }
        try await load(slice, modern, "modern", on: .modern)

        heading("backfill the rows that hold v1 only")
        let reporter = console.progress(label: "   backfill", total: nil, isQuiet: context.isQuiet)
        try await step("backfill") { try $0.run(.backfill) { reporter.update(completed: Int($0.converted), total: $0.total.map { Int($0) }) } }
        reporter.finish()
        try await load(slice, modern, "backfilled", on: .modern)

        heading("rollback drill: switch back to legacy, then forward again")
        ledger.setDrill(true)
        try await step("switch legacy") { try $0.run(.switchLegacy) }
        try await load(slice, modern, "legacy again", on: .legacy)
        try await step("switch modern") { try $0.run(.switchModern) }
        try await step("backfill") { try $0.run(.backfill) }
        ledger.setDrill(false)
        // Contract needs the modern writer alone, and no legacy write, for the window.
        try await load(max(slice, DemoRunner.window + .milliseconds(500)), modern, "modern after the drill", on: .modern)

        heading("contract: remove the v1 representation (irreversible)")
        try await step("contract") { try $0.run(.contract) }
        try await load(slice, modern, "contracted", on: .modern)

        for instance in modern where !(await finishes(within: .seconds(60), { await instance.stopLoad() })) {
            note("\(instance.name) did not finish its last save within 60s")
            ledger.record(LoadFailure(kind: .unanswered, code: "load still running after 60s"))
        }
        await following.finish(fleet)
        var routerCounts: [SavePath: [SaveOutcome: Int]] = [:]
        for instance in modern {
            let counts = await instance.router.counts
            for path in SavePath.allCases {
                for (outcome, count) in counts.outcomes(on: path) { routerCounts[path, default: [:]][outcome, default: 0] += count }
            }
        }
        for instance in modern where !(await finishes(within: .seconds(20), { await instance.shutdown() })) {
            note("\(instance.name) did not shut down within 20s; leaving it to the process's exit")
        }
        heading("verify")
        let invariants = try await runOnDedicatedThread {
            try DemoVerification.verify(ledger, following: following, seededDrafts: rows, faultsInjected: false,
                                        on: PostgresConnection(configuration: configuration))
        }
        let retries = ledger.retries
        return DemoResult(invariants: invariants, counts: routerCounts, acknowledged: ledger.acknowledged.count,
                          legacyWrites: ledger.legacyUpdates.values.reduce(0, +) + Int64(ledger.legacyInserts.count),
                          retriedUnknown: retries.unknown, conflicts: retries.conflicts, steps: runner.steps)
    }

    /// Lets the fleet save for `span`, and on until every instance has saved down `path` since
    /// this began (a loaded machine may take longer than the span), then says what it did.
    private func load(_ span: Duration, _ fleet: [ModernApplicationInstance], _ label: String, on path: SavePath) async throws {
        var before: [Int] = []
        for instance in fleet { before.append(await instance.router.counts.calls(on: path)) }
        try await Task.sleep(for: span)
        let deadline = ContinuousClock.now + .seconds(60)
        for (instance, calls) in zip(fleet, before) {
            while await instance.router.counts.calls(on: path) == calls, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        var committed: [SavePath: Int] = [:]
        var other: [SavePath: Int] = [:]
        for instance in fleet {
            let counts = await instance.router.counts
            for path in SavePath.allCases {
                committed[path, default: 0] += counts.count(of: .committed, on: path)
                other[path, default: 0] += counts.calls(on: path) - counts.count(of: .committed, on: path)
            }
        }
        note("   load while \(label): legacy path \(committed[.legacy] ?? 0) committed, \(other[.legacy] ?? 0) other; "
             + "modern path \(committed[.modern] ?? 0) committed, \(other[.modern] ?? 0) other (totals so far)")
    }
}

/// The runner the demo drives, on a thread of its own.
final class DemoRunner: @unchecked Sendable {
    // Safe because every use goes through `step`, awaited one at a time by the demo.
    private let runner: PhaseRunner
    private let log: @Sendable (String) -> Void
    private(set) var steps: [String] = []

    /// The modern-writer window the demo's contract waits for.
    static let window: Duration = .seconds(2)

    /// A runner of `source`, a plan of the drafts table: the built-in one, or one `--plan` names.
    init(configuration: PostgresConfiguration, source: PlanSource, log: @escaping @Sendable (String) -> Void) async throws {
        var named = configuration
        named.applicationName = "cutover-phase"
        let configured = named
        self.runner = try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: configured)
            return RunnerBox(PhaseRunner(connection: connection, source: source,
                                         options: .init(modernWriterWindow: DemoRunner.window, readerStaleAfter: .seconds(5)), log: log))
        }.runner
        self.log = log
    }

    func step<T>(_ name: String, _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws {
        let box = RunnerBox(runner)
        let report = try await runOnDedicatedThread { () -> String in
            let value = try body(box.runner)
            if let report = value as? PhaseRunner.StepReport {
                return "\(report.step): \(report.from) -> \(report.to), epoch \(report.epoch), \(report.checks.count) checks passed"
            }
            if let report = value as? Rehearsal.Report {
                // The counts vary with the plan's format and the live rows; the verdict is the step's result.
                return "rehearse: \(report.verdict.rawValue), every step and rollback run on a scratch copy, the old application's SQL replayed after each; scratch database removed"
            }
            return "\(name): done"
        }
        steps.append(report)
        log(report)
    }
}

/// Carries the runner to its thread.
private struct RunnerBox: @unchecked Sendable {
    // Safe because the demo awaits each step before the next: one thread at a time.
    let runner: PhaseRunner
    init(_ runner: PhaseRunner) { self.runner = runner }
}

/// Runs the demo's cleanup once: at the end, or when the user interrupts; whoever comes second
/// waits until it is done.
final class Cleanup: @unchecked Sendable {
    // Safe because every field is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var action: (@Sendable () -> Void)?
    private var isDone = false

    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    func run() {
        condition.lock()
        guard let pending = action else {
            while !isDone { condition.wait() }
            condition.unlock()
            return
        }
        action = nil
        condition.unlock()
        pending()
        condition.lock()
        isDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// Cleans up and ends the process when a signal asks `phase` to stop (``StopSignals``):
    /// the fleet's threads are still saving, so there is nothing to unwind to.
    func onInterrupt() -> [StopSignals.Registration] {
        [StopSignals.shared.onStop { [self] signal in
            FileHandle.standardError.write(Data("\ninterrupted: removing the demo's database\n".utf8))
            run()
            StopSignals.shared.leave(signal)
        }]
    }
}

struct DemoResult: CommandResult {
    let invariants: [DemoInvariant]
    let counts: [SavePath: [SaveOutcome: Int]]
    let acknowledged: Int
    let legacyWrites: Int64
    let retriedUnknown: Int
    let conflicts: Int
    let steps: [String]

    /// Done only if every invariant holds.
    var exitCode: ExitCode { invariants.allSatisfy(\.holds) ? .done : .error }

    var text: String {
        var lines = ["steps:"] + steps.map { "  \($0)" }
        lines.append("load: \(acknowledged) saves acknowledged through the router, \(legacyWrites) writes by old versions, "
                     + "\(conflicts) conflicts re-read, \(retriedUnknown) unknown outcomes retried")
        for path in SavePath.allCases {
            let outcomes = (counts[path] ?? [:]).sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            lines.append("  \(path) path: \(outcomes.isEmpty ? "no saves" : outcomes)")
        }
        lines.append("invariants:")
        lines += invariants.map { "  \($0.holds ? "ok    " : "FAILED") \($0.name): \($0.detail)" }
        lines.append(invariants.allSatisfy(\.holds) ? "all invariants hold" : "an invariant does not hold")
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        ["steps": .array(steps.map(JSONResult.string)), "acknowledged": .integer(Int64(acknowledged)),
         "legacyWrites": .integer(legacyWrites), "conflicts": .integer(Int64(conflicts)),
         "retriedUnknown": .integer(Int64(retriedUnknown)),
         "paths": .object(Dictionary(uniqueKeysWithValues: SavePath.allCases.map { path in
             (path.rawValue, JSONResult.object(Dictionary(uniqueKeysWithValues: (counts[path] ?? [:]).map { ($0.key.rawValue, JSONResult.integer(Int64($0.value))) })))
         })),
         "invariants": .array(invariants.map { ["name": .string($0.name), "holds": .bool($0.holds), "detail": .string($0.detail)] }),
         "ok": .bool(invariants.allSatisfy(\.holds))]
    }
}
