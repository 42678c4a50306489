import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

/// Whether every instance of the simulated fleet followed each change of the plan's state:
/// its fleet writer path came to hold the new path and epoch within a bound, and from then on
/// its router sent saves down that path only, and did send some.
///
/// Wrap every step the runner takes in ``step(_:_:_:)``; call ``start(_:)`` once the fleet
/// runs and ``finish(_:)`` once its load has stopped. What the plan's state is comes from the
/// control schema, read after each step, never from what the step said it did: a step that
/// failed around its COMMIT may have changed it all the same.
final class SwitchFollowing: Sendable {
    /// How long an instance may take to hold a new state.
    let bound: Duration
    private let configuration: PostgresConfiguration
    private let plan: String
    private let record = Mutex(Record())

    /// One instance's time under one state of the plan.
    private struct Window {
        var instance: String
        var step: String
        var setting: FleetWriterPath.Setting
        var reached: Bool
        var opened: SaveRouterCounts
        var closed: SaveRouterCounts?

        /// Saves sent down `path` in the window, once it is closed.
        func calls(on path: SavePath) -> Int {
            (closed?.calls(on: path) ?? 0) - opened.calls(on: path)
        }
    }

    private struct Record {
        var windows: [Window] = []
        var held: FleetWriterPath.Setting?
        var countsBeforeStep: [String: SaveRouterCounts] = [:]
        var problems: [String] = []
    }

    /// Follows the state of `plan` in the database `configuration` reaches directly; an
    /// instance may take up to `bound` to hold a new state.
    init(configuration: PostgresConfiguration, plan: String = "drafts", bound: Duration = .seconds(10)) {
        self.configuration = configuration
        self.plan = plan
        self.bound = bound
    }

    /// Opens each instance's first window, at the state the fleet started in.
    func start(_ fleet: [ModernApplicationInstance]) async {
        await settle(after: "start", fleet)
    }

    /// Runs one step of the runner; before it, each instance's window is marked to close, and
    /// after it (done or failed), a changed state opens the next windows.
    func step<T: Sendable>(_ name: String, _ fleet: [ModernApplicationInstance],
                           _ body: () async throws -> T) async throws -> T {
        let counts = await Self.counts(of: fleet)
        record.withLock { $0.countsBeforeStep = counts }
        do {
            let value = try await body()
            await settle(after: name, fleet)
            return value
        } catch {
            await settle(after: name, fleet)
            throw error
        }
    }

    /// Waits until every instance has sent a save down the path of its open window since the
    /// window opened, or `timeout` has passed. A driver that calls it before its next step gives
    /// each stretch of one path its saves however slowly a loaded machine runs the fleet; an
    /// instance that never saves down the path it holds is still reported once the bound passes.
    func waitForSavesOnHeldPath(_ fleet: [ModernApplicationInstance], timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let counts = await Self.counts(of: fleet)
            let isWaiting = record.withLock { record in
                record.windows.contains { window in
                    window.closed == nil
                        && (counts[window.instance]?.calls(on: window.setting.path) ?? 0) <= window.opened.calls(on: window.setting.path)
                }
            }
            if !isWaiting { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Closes the windows still open, once the load has stopped.
    func finish(_ fleet: [ModernApplicationInstance]) async {
        let counts = await Self.counts(of: fleet)
        record.withLock { record in
            for index in record.windows.indices where record.windows[index].closed == nil {
                record.windows[index].closed = counts[record.windows[index].instance]
            }
        }
    }

    /// What each instance's router has sent down each path so far, by instance name.
    private static func counts(of fleet: [ModernApplicationInstance]) async -> [String: SaveRouterCounts] {
        var counts: [String: SaveRouterCounts] = [:]
        for instance in fleet { counts[instance.name] = await instance.router.counts }
        return counts
    }

    /// Reads the plan's state; when it changed, closes the open windows at the counts taken
    /// before the step, waits until each instance holds the new state, and opens new windows.
    private func settle(after step: String, _ fleet: [ModernApplicationInstance]) async {
        let found: FleetWriterPath.Setting
        do {
            found = try await readState()
        } catch {
            record.withLock { $0.problems.append("the plan's state could not be read after \(step): \(error)") }
            return
        }
        let changed = record.withLock { record -> Bool in
            defer { record.countsBeforeStep = [:] }
            guard record.held != found else { return false }
            record.held = found
            for index in record.windows.indices where record.windows[index].closed == nil {
                record.windows[index].closed = record.countsBeforeStep[record.windows[index].instance]
            }
            return true
        }
        guard changed else { return }
        let bound = bound
        let opened = await withTaskGroup(of: Window.self) { group in
            for instance in fleet {
                group.addTask {
                    let reached = await instance.fleet.waitUntil(timeout: bound) { $0 == found }
                    return Window(instance: instance.name, step: step, setting: found, reached: reached,
                                  opened: await instance.router.counts)
                }
            }
            var windows: [Window] = []
            for await window in group { windows.append(window) }
            return windows.sorted { $0.instance < $1.instance }
        }
        record.withLock { $0.windows += opened }
    }

    /// The plan's path and epoch, read again for a while if the server is away (a restart).
    private func readState() async throws -> FleetWriterPath.Setting {
        let configuration = configuration
        let plan = plan
        return try await runOnDedicatedThread {
            var failure: any Error = PhaseRunnerError.notInitialized(plan)
            for _ in 0..<40 {
                do {
                    let connection = try PostgresConnection(configuration: configuration)
                    guard let state = try MigrationState.load(plan: plan, on: connection) else { throw PhaseRunnerError.notInitialized(plan) }
                    return FleetWriterPath.Setting(path: state.writerPath, epoch: state.epoch)
                } catch {
                    failure = error
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
            throw failure
        }
    }

    /// Everything that went against following, one line each.
    var problems: [String] {
        let (windows, recorded) = record.withLock { ($0.windows, $0.problems) }
        var problems = recorded
        for window in windows {
            let other: SavePath = window.setting.path == .legacy ? .modern : .legacy
            if !window.reached {
                problems.append("\(window.instance) did not hold \(window.setting) within \(DurationText.format(bound)) after \(window.step)")
            }
            let stray = window.calls(on: other)
            if stray > 0 {
                problems.append("\(window.instance) sent \(stray) saves down \(other) after \(window.step) (\(window.setting))")
            }
        }
        // Each stretch of one path, per instance, must have seen saves down that path.
        for instance in Set(windows.map(\.instance)).sorted() {
            var stretch: [Window] = []
            for window in windows where window.instance == instance {
                if let last = stretch.last, last.setting.path != window.setting.path {
                    problems += Self.idle(stretch)
                    stretch = []
                }
                stretch.append(window)
            }
            problems += Self.idle(stretch)
        }
        return problems
    }

    /// A line when a closed stretch of one path saw no save down it.
    private static func idle(_ stretch: [Window]) -> [String] {
        guard let first = stretch.first, stretch.allSatisfy({ $0.closed != nil }) else { return [] }
        let calls = stretch.map { $0.calls(on: first.setting.path) }.reduce(0, +)
        return calls > 0 ? [] : ["\(first.instance) sent no save down \(first.setting.path) after \(first.step)"]
    }

    /// The invariant: every instance followed every change of the plan's state.
    var invariant: DemoInvariant {
        let problems = problems
        let (changes, instances) = record.withLock { record in
            (Set(record.windows.map(\.setting.epoch)).count, Set(record.windows.map(\.instance)).count)
        }
        let holds = problems.isEmpty && changes > 1
        let detail = !problems.isEmpty ? "\(problems.count) problems: " + problems.prefix(3).joined(separator: "; ")
            : changes > 1 ? "\(instances) instances each held the new path and epoch within \(DurationText.format(bound)) "
                + "after each of \(changes - 1) changes, then saved down that path only"
            : "no change of the writer path was seen"
        return DemoInvariant(name: "every instance followed every switch", holds: holds, detail: detail)
    }
}
