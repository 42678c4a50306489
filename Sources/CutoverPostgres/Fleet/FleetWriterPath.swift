import Cutover
import Foundation
import PostgresClient
import Synchronization

/// The fleet-wide writer path: what `phase switch` last committed, followed by every
/// application instance.
///
/// It reads the plan's state once, then listens for the NOTIFY that `phase switch` sends in the
/// same transaction as the change, and applies each newer epoch to later operations. After a
/// lost connection it re-reads the state (notifications sent meanwhile were missed), and it
/// also re-reads every `pollInterval`, so a missed notification delays a switch and never loses
/// one. Give it to a ``SaveRouter`` as its source:
///
/// ```swift
/// let fleet = try await FleetWriterPath.start(configuration: configuration)
/// let router = SaveRouter(legacy: legacy, modern: modern, following: fleet)
/// ```
public final class FleetWriterPath: WriterPathSource, Sendable {
    /// The path and the epoch it was set at.
    public struct Setting: Sendable, Equatable {
        /// The writer path.
        public var path: SavePath
        /// The epoch of the change that set it.
        public var epoch: Int64
    }

    /// The plan whose writer path this follows.
    public let plan: String
    private let setting: Mutex<Setting>
    private let pool: PostgresPool
    private let listener: PostgresListener
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let changes = Mutex<[(id: UUID, epoch: Int64, continuation: CheckedContinuation<Bool, Never>)]>([])

    private init(plan: String, initial: Setting, pool: PostgresPool, listener: PostgresListener) {
        self.plan = plan
        self.setting = Mutex(initial)
        self.pool = pool
        self.listener = listener
    }

    /// Reads the plan's writer path and starts following it.
    ///
    /// - Throws: ``PhaseRunnerError/notInitialized(_:)`` when the plan has no state, or a
    ///   connection error.
    public static func start(configuration: PostgresConfiguration, plan: String = "drafts",
                             pollInterval: Duration = .seconds(5)) async throws -> FleetWriterPath {
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        let initial = try await read(plan: plan, pool: pool)
        let listener = PostgresListener(configuration: configuration, channels: [MigrationState.notificationChannel])
        let fleet = FleetWriterPath(plan: plan, initial: initial, pool: pool, listener: listener)
        fleet.follow(pollInterval: pollInterval)
        return fleet
    }

    /// The path the next operation takes.
    public func currentPath() -> SavePath {
        setting.withLock { $0.path }
    }

    /// The path and its epoch.
    public var current: Setting {
        setting.withLock { $0 }
    }

    /// Re-reads the state from the database now.
    public func refresh() async throws {
        apply(try await Self.read(plan: plan, pool: pool))
    }

    /// Waits until the epoch reaches `epoch`; false when `timeout` passes first.
    public func waitForEpoch(_ epoch: Int64, timeout: Duration) async -> Bool {
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.release(id: id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            changes.withLock { $0.append((id, epoch, continuation)) }
            // The epoch may already be there.
            release(upTo: setting.withLock { $0.epoch }, result: true)
        }
    }

    /// Stops following; the path stays where it was.
    public func stop() async {
        tasks.withLock { tasks in
            tasks.forEach { $0.cancel() }
            tasks = []
        }
        await listener.stopAndWait()
        release(upTo: .max, result: false)
        await pool.shutdown()
    }

    private func follow(pollInterval: Duration) {
        let events = listener.events
        let plan = plan
        let listening = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .notification(let note):
                    if let change = Self.decode(note.payload), change.plan == plan {
                        self.apply(Setting(path: change.path, epoch: change.epoch))
                    }
                case .listening(isReconnect: true):
                    try? await self.refresh()
                case .listening, .connectionLost:
                    break
                }
            }
        }
        let polling = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                guard !Task.isCancelled, let self else { return }
                try? await self.refresh()
            }
        }
        tasks.withLock { $0 = [listening, polling] }
    }

    /// Takes a newer setting; an older or equal epoch (a late notification) changes nothing.
    private func apply(_ newer: Setting) {
        let moved = setting.withLock { current -> Bool in
            guard newer.epoch > current.epoch else { return false }
            current = newer
            return true
        }
        if moved { release(upTo: newer.epoch, result: true) }
    }

    private func release(upTo epoch: Int64, result: Bool) {
        let ready = changes.withLock { waiting -> [CheckedContinuation<Bool, Never>] in
            let due = waiting.filter { $0.epoch <= epoch }
            waiting.removeAll { $0.epoch <= epoch }
            return due.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: result) }
    }

    /// Gives up one waiter whose time ran out.
    private func release(id: UUID) {
        let expired = changes.withLock { waiting -> CheckedContinuation<Bool, Never>? in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return waiting.remove(at: index).continuation
        }
        expired?.resume(returning: false)
    }

    private static func read(plan: String, pool: PostgresPool) async throws -> Setting {
        try await pool.withConnection { connection in
            guard let state = try MigrationState.load(plan: plan, on: connection) else { throw PhaseRunnerError.notInitialized(plan) }
            return Setting(path: state.writerPath, epoch: state.epoch)
        }
    }

    private struct Change: Decodable {
        let plan: String
        let writerPath: String
        let epoch: Int64
        var path: SavePath { SavePath(rawValue: writerPath) ?? .legacy }
    }

    private static func decode(_ payload: String) -> Change? {
        guard let change = try? JSONDecoder().decode(Change.self, from: Data(payload.utf8)),
              SavePath(rawValue: change.writerPath) != nil else { return nil }
        return change
    }
}
