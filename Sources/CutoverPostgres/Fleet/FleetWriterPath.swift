import Cutover
import Foundation
import PostgresClient
import Synchronization

/// The fleet-wide writer path: what `phase switch` last committed, followed by every
/// application instance.
///
/// The path and its epoch are only ever what the plan's row of `cutover.migration_state` says,
/// which only the migrator can change. A notification on `cutover_state` is a hint to read that
/// row again, never a value: any role that can connect can send one, so its path and epoch are
/// not used. A burst of notifications costs one read while a read is in flight and one more
/// after it. The row is also read after the listening connection comes back (notifications
/// sent meanwhile were missed) and every `pollInterval`, so a lost notification delays a switch
/// and never loses one. Each read is taken as it is, lower epoch included (a restored database,
/// or an epoch that an older version took from a forged notification): the database is the
/// truth, and reads are applied in the order they ran.
///
/// A read that fails leaves the path where it was; ``health`` holds the last error, `log`
/// hears of the first failure in a row and of the recovery, and `logger` of every failure (a
/// warning), of a lost listening connection (a warning) and of every change.
///
/// Reads are single statements with no session state, so `configuration` may go through any
/// pooler. LISTEN needs a session of its own, and through a transaction pooler (PgBouncer in
/// `pool_mode = transaction`) notifications never arrive; give such an instance a direct
/// connection for LISTEN (``Listening/direct(_:)``), or none (``Listening/off``): it then follows
/// by polling alone, and says so once (``Event/pollingOnly(reason:)``, ``Health/pollingOnlyReason``).
/// A standby cannot LISTEN at all (`cannot execute LISTEN during recovery`): connected to one, the
/// path is followed by polling, behind the primary by the standby's replay lag, and reported
/// once the same way.
///
/// Give it to a ``SaveRouter`` as its source:
///
/// ```swift
/// let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "orders")
/// let router = SaveRouter(legacy: legacy, modern: modern, following: fleet)
///
/// // Saves and reads through PgBouncer in transaction mode, LISTEN straight to PostgreSQL:
/// let pooled = try await FleetWriterPath.start(configuration: throughPgBouncer, plan: "orders",
///                                              listening: .direct(toPostgres))
/// ```
public final class FleetWriterPath: WriterPathSource, Sendable {
    /// Where the notifications that hasten a change come from.
    public enum Listening: Sendable {
        /// LISTEN on a connection made like the reads' (right when they reach PostgreSQL directly
        /// or through a session pooler).
        case onReadConnection
        /// LISTEN on a connection of its own to this address: PostgreSQL itself, or a session
        /// pool, when the reads go through a transaction pooler.
        case direct(PostgresConfiguration)
        /// No LISTEN: changes arrive by the poll alone.
        case off
    }

    /// The path and the epoch it was set at.
    public struct Setting: Sendable, Equatable, CustomStringConvertible {
        /// The writer path.
        public var path: SavePath
        /// The epoch of the change that set it.
        public var epoch: Int64

        /// A path and the epoch it was set at.
        public init(path: SavePath, epoch: Int64) {
            self.path = path
            self.epoch = epoch
        }

        public var description: String { "writer \(path), epoch \(epoch)" }
    }

    /// Whether the state is being read, and what went wrong last.
    public struct Health: Sendable {
        /// Reads of the state that succeeded, the first one included.
        public var reads: Int
        /// When a read last succeeded.
        public var lastRead: ContinuousClock.Instant
        /// Reads that failed in a row since the last one that succeeded.
        public var consecutiveFailures: Int
        /// The error of the last read when it failed; nil once a read succeeds again.
        public var lastError: (any Error)?
        /// Whether LISTEN is in place; while it is not, changes arrive by the poll only.
        public var isListening: Bool
        /// Why the path is followed by polling alone (no LISTEN was asked for, or the server is
        /// a standby); nil when LISTEN is in place or being retried.
        public var pollingOnlyReason: String? = nil

        /// Whether the last read succeeded.
        public var isHealthy: Bool { lastError == nil }
    }

    /// What a ``FleetWriterPath`` tells the logger its caller gave it.
    public enum Event: Sendable, CustomStringConvertible {
        /// A read found another path or epoch than the one held.
        case changed(from: Setting, to: Setting)
        /// A read failed after one that succeeded; later failures in a row only count in ``health``.
        case readFailed(any Error)
        /// A read succeeded after `failures` that failed in a row.
        case readRecovered(failures: Int)
        /// The listening connection was lost or could not be made; it is being retried.
        case listenerLost(reason: String)
        /// No LISTEN is made, for the reason given: changes arrive by the poll alone. Told once, at start.
        case pollingOnly(reason: String)

        /// How much the event matters to the logger: failures are warnings, a change is news.
        public var level: CutoverLogger.Level {
            switch self {
            case .changed, .readRecovered: .info
            case .pollingOnly: .notice
            case .readFailed, .listenerLost: .warning
            }
        }

        public var description: String {
            switch self {
            case .changed(let from, let to): "fleet writer path: \(from) -> \(to)"
            case .readFailed(let error): "fleet writer path: reading the state failed, keeping the path held: \(error)"
            case .readRecovered(let failures): "fleet writer path: reading the state works again after \(failures) failed reads"
            case .listenerLost(let reason): "fleet writer path: listening connection lost, retrying: \(reason)"
            case .pollingOnly(let reason): "fleet writer path: following by polling alone: \(reason)"
            }
        }
    }

    /// The plan whose writer path this follows.
    public let plan: String
    private let state: Mutex<State>
    private let pool: PostgresPool
    private let listener: PostgresListener?
    private let log: @Sendable (Event) -> Void
    private let logger: CutoverLogger
    private let readRequests: AsyncStream<Void>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let changes = Mutex<[Waiter]>([])

    private typealias Waiter = (id: UUID, condition: @Sendable (Setting) -> Bool, continuation: CheckedContinuation<Bool, Never>)

    /// What the reads found, and the order they ran in.
    private struct State {
        var setting: Setting
        var health: Health
        /// Numbers the reads in the order they ran on the connection.
        var lastTicket = 0
        /// The ticket of the read whose setting is held; an older one that finishes later is dropped.
        var appliedTicket = 0
        /// The ticket of the read that last updated ``health``.
        var healthTicket = 0
        /// Set by ``stop()``: a read cut short by it is not news for the log.
        var isStopped = false
    }

    private init(plan: String, initial: Setting, pool: PostgresPool, listener: PostgresListener?, pollingOnlyReason: String?,
                 log: @escaping @Sendable (Event) -> Void, logger: CutoverLogger, readRequests: AsyncStream<Void>.Continuation) {
        self.plan = plan
        self.state = Mutex(State(setting: initial,
                                 health: Health(reads: 1, lastRead: .now, consecutiveFailures: 0, lastError: nil,
                                                isListening: false, pollingOnlyReason: pollingOnlyReason)))
        self.pool = pool
        self.listener = listener
        self.log = log
        self.logger = logger
        self.readRequests = readRequests
    }

    /// Reads the plan's writer path and starts following it.
    ///
    /// - Parameters:
    ///   - plan: the plan whose state to follow, as `phase` names it (the `name` of its
    ///     `plan.json`; `"drafts"` for the built-in plan). No plan is assumed: two migrations in
    ///     one database have two writer paths.
    ///   - listening: where LISTEN goes; on a connection like the reads' unless told otherwise.
    ///   - pollInterval: how often the state is read even without a notification.
    ///   - log: hears of changes, the first of failed reads in a row, a recovery and a lost
    ///     listening connection, as events; called from a background task, so it must not block.
    ///   - logger: hears of the same, and of every failed read, as records of their level.
    /// - Throws: ``PhaseRunnerError/notInitialized(_:)`` when the plan has no state, or a
    ///   connection error.
    public static func start(configuration: PostgresConfiguration, plan: String,
                             listening: Listening = .onReadConnection, pollInterval: Duration = .seconds(5),
                             log: @escaping @Sendable (Event) -> Void = { _ in },
                             logger: CutoverLogger = .disabled) async throws -> FleetWriterPath {
        // One connection, so that reads run one after another and their tickets follow that order.
        let pool = PostgresPool(configuration: configuration, maximumConnections: 1)
        let initial: Setting
        let listenTo: PostgresConfiguration?
        var pollingOnlyReason: String?
        do {
            (initial, listenTo, pollingOnlyReason) = try await pool.withConnection { connection in
                let initial = try Self.load(plan: plan, on: connection)
                switch listening {
                case .off:
                    return (initial, nil, "no connection for LISTEN was given")
                case .onReadConnection:
                    if try Self.isInRecovery(connection) {
                        return (initial, nil, "the server is a standby, where LISTEN is impossible; polling every \(pollInterval)")
                    }
                    return (initial, configuration, nil)
                case .direct(let direct):
                    let listener = try PostgresConnection(configuration: direct)
                    if try Self.isInRecovery(listener) {
                        return (initial, nil, "the LISTEN server is a standby, where LISTEN is impossible; polling every \(pollInterval)")
                    }
                    return (initial, direct, nil)
                }
            }
        } catch {
            await pool.shutdown()
            throw error
        }
        let listener = listenTo.map { PostgresListener(configuration: $0, channels: [MigrationState.notificationChannel]) }
        // Holding one pending request at most is what coalesces a burst into one more read.
        let (requests, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let fleet = FleetWriterPath(plan: plan, initial: initial, pool: pool, listener: listener,
                                    pollingOnlyReason: pollingOnlyReason, log: log, logger: logger, readRequests: continuation)
        if let pollingOnlyReason { fleet.report(.pollingOnly(reason: pollingOnlyReason)) }
        fleet.follow(requests: requests, pollInterval: pollInterval)
        return fleet
    }

    /// Whether the server is a standby (`pg_is_in_recovery()`).
    private static func isInRecovery(_ connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT pg_is_in_recovery() AS standby")[0].decode(Bool.self, "standby")
    }

    /// The path the next operation takes.
    public func currentPath() -> SavePath {
        state.withLock { $0.setting.path }
    }

    /// The path and its epoch.
    public var current: Setting {
        state.withLock { $0.setting }
    }

    /// Whether the last read of the state succeeded, and its error when it did not.
    public var health: Health {
        state.withLock { $0.health }
    }

    /// Re-reads the state from the database now and takes it.
    public func refresh() async throws {
        try await readAndApply()
    }

    /// Waits until the epoch reaches `epoch`; false when `timeout` passes first.
    public func waitForEpoch(_ epoch: Int64, timeout: Duration) async -> Bool {
        await waitUntil(timeout: timeout) { $0.epoch >= epoch }
    }

    /// Waits until the setting held satisfies `condition` (checked now and after each change);
    /// false when `timeout` passes first, the path stops being followed or the caller's task is
    /// cancelled.
    ///
    /// ```swift
    /// let restored = await fleet.waitUntil(timeout: .seconds(10)) { $0 == .init(path: .modern, epoch: 7) }
    /// ```
    public func waitUntil(timeout: Duration, _ condition: @escaping @Sendable (Setting) -> Bool) async -> Bool {
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.release(id: id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                changes.withLock { $0.append((id, condition, continuation)) }
                // The setting may be there already, and the caller cancelled already.
                release(matching: state.withLock { $0.setting })
                if Task.isCancelled { release(id: id) }
            }
        } onCancel: { [weak self] in
            self?.release(id: id)
        }
    }

    /// Stops following; the path stays where it was.
    public func stop() async {
        state.withLock { $0.isStopped = true }
        tasks.withLock { tasks in
            tasks.forEach { $0.cancel() }
            tasks = []
        }
        readRequests.finish()
        await listener?.stopAndWait()
        let waiting = changes.withLock { waiting -> [Waiter] in
            defer { waiting = [] }
            return waiting
        }
        waiting.forEach { $0.continuation.resume(returning: false) }
        await pool.shutdown()
    }

    private func follow(requests: AsyncStream<Void>, pollInterval: Duration) {
        let events = listener?.events ?? AsyncStream { $0.finish() }
        let plan = plan
        let readRequests = readRequests
        let listening = Task { [weak self] in
            for await event in events {
                switch event {
                case .notification(let note):
                    if Self.mayConcern(note.payload, plan: plan) { readRequests.yield() }
                case .listening:
                    self?.state.withLock { $0.health.isListening = true }
                    // Notifications sent before LISTEN was in place (or while it was down) were missed.
                    readRequests.yield()
                case .connectionLost(let reason):
                    guard let self else { return }
                    let wasStopped = state.withLock { state -> Bool in
                        state.health.isListening = false
                        return state.isStopped
                    }
                    if !wasStopped { report(.listenerLost(reason: reason)) }
                }
            }
        }
        let reading = Task { [weak self] in
            for await _ in requests {
                guard let self, !Task.isCancelled else { return }
                // A failure is kept in `health` and told to `log` and `logger` by readAndApply's
                // record; the path stays.
                do { try await self.readAndApply() } catch {}
            }
        }
        let polling = Task { [weak self] in
            while !Task.isCancelled {
                // Sleep ends early only when stop() cancels the task.
                do { try await Task.sleep(for: pollInterval) } catch { return }
                guard self != nil else { return }
                readRequests.yield()
            }
        }
        tasks.withLock { $0 = [listening, reading, polling] }
    }

    /// Reads the plan's state, takes it unless a later read was taken already, and records how
    /// the read went.
    private func readAndApply() async throws {
        let plan = plan
        let read: (ticket: Int, result: Result<Setting, any Error>)
        do {
            read = try await pool.withConnection { [self] connection in
                // Taken on the pool's only connection: tickets number the reads in the order they ran.
                let ticket = takeTicket()
                return (ticket, Result { try Self.load(plan: plan, on: connection) })
            }
        } catch {
            // No connection: the read did not run, so its failure is the latest news.
            read = (takeTicket(), .failure(error))
        }
        record(read.result, ticket: read.ticket)
        switch read.result {
        case .success(let setting): apply(setting, ticket: read.ticket)
        case .failure(let error): throw error
        }
    }

    private func takeTicket() -> Int {
        state.withLock { state -> Int in
            state.lastTicket += 1
            return state.lastTicket
        }
    }

    /// Takes the setting a read found, whatever its epoch, unless a later read was taken already.
    private func apply(_ found: Setting, ticket: Int) {
        let change = state.withLock { state -> (from: Setting, to: Setting)? in
            guard ticket > state.appliedTicket else { return nil }
            state.appliedTicket = ticket
            guard found != state.setting else { return nil }
            defer { state.setting = found }
            return (state.setting, found)
        }
        guard let change else { return }
        report(.changed(from: change.from, to: change.to))
        release(matching: found)
    }

    private func record(_ result: Result<Setting, any Error>, ticket: Int) {
        let (event, repeated) = state.withLock { state -> (Event?, failures: Int?) in
            guard ticket > state.healthTicket else { return (nil, nil) }
            state.healthTicket = ticket
            switch result {
            case .success:
                let failures = state.health.consecutiveFailures
                state.health.reads += 1
                state.health.lastRead = .now
                state.health.consecutiveFailures = 0
                state.health.lastError = nil
                return (failures > 0 ? .readRecovered(failures: failures) : nil, nil)
            case .failure(let error):
                state.health.consecutiveFailures += 1
                state.health.lastError = error
                let failures = state.health.consecutiveFailures
                return failures == 1 ? (.readFailed(error), nil) : (nil, failures)
            }
        }
        guard !state.withLock({ $0.isStopped }) else { return }
        if let event { report(event) }
        if let repeated, case .failure(let error) = result {
            // `log` heard of the first failure in a row; the logger hears of each one.
            logger.log(.warning, "\(Event.readFailed(error))", metadata: ["plan": plan, "failures": "\(repeated)"])
        }
    }

    /// Tells `log` and `logger` of `event`.
    private func report(_ event: Event) {
        log(event)
        logger.log(event.level, event.description, metadata: ["plan": plan])
    }

    /// Lets every waiter go whose condition `setting` satisfies.
    private func release(matching setting: Setting) {
        let ready = changes.withLock { waiting -> [CheckedContinuation<Bool, Never>] in
            var due: [CheckedContinuation<Bool, Never>] = []
            waiting.removeAll { waiter in
                guard waiter.condition(setting) else { return false }
                due.append(waiter.continuation)
                return true
            }
            return due
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Gives up one waiter whose time ran out.
    private func release(id: UUID) {
        let expired = changes.withLock { waiting -> CheckedContinuation<Bool, Never>? in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return waiting.remove(at: index).continuation
        }
        expired?.resume(returning: false)
    }

    private static func load(plan: String, on connection: PostgresConnection) throws -> Setting {
        guard let state = try MigrationState.load(plan: plan, on: connection) else { throw PhaseRunnerError.notInitialized(plan) }
        return Setting(path: state.writerPath, epoch: state.epoch)
    }

    /// The only part of a payload ever looked at: the plan it names.
    private struct Addressed: Decodable {
        let plan: String
    }

    /// Whether a notification may concern `plan`, so that the state is worth reading again:
    /// anything but a well-formed payload naming another plan. A payload that cannot be read
    /// asks for a read too, since a read changes nothing that the database does not say.
    static func mayConcern(_ payload: String, plan: String) -> Bool {
        guard let addressed = try? JSONDecoder().decode(Addressed.self, from: Data(payload.utf8)) else { return true }
        return addressed.plan == plan
    }
}
