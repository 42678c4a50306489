import Cutover
import PostgresClient
import Synchronization

/// Keeps one Swift application instance registered with one plan: a heartbeat now and every
/// `interval`, and a goodbye on ``stop()``.
///
/// The registration is the plan's: `phase readers`, and the reader checks of `phase switch` and
/// `phase contract`, of that plan count it, and another plan's do not. An instance that reads
/// the data of two plans keeps a registration with each, with the formats it reads of each.
///
/// The registration carries a secret made for this process (``ReaderRegistry/makeToken()``),
/// so no other process can rewrite or remove it while it heartbeats. When another live process
/// holds the instance ID asked for (a copy of this instance, or this instance before a crash,
/// not yet silent for ``ReaderRegistry/takeoverAfter``), the instance registers under that ID
/// with a random suffix instead, so that it is never missing from the registry.
///
/// Given the ``FleetWriterPath`` the instance's router follows, it also reports the epoch it
/// follows, with each heartbeat and as soon as the path changes, so that `phase switch
/// --wait-for-fleet` knows when no instance writes down the old path any more.
///
/// A background heartbeat that fails is reported to `logger` as a warning, every time, and
/// the next one tries again; ``health`` says when the last one succeeded. An instance whose
/// heartbeats keep failing is `late` in `phase readers` after half the staleness limit and
/// `stale` after it, when the switch's and contract's checks stop counting it.
///
/// ```swift
/// let registration = try await ReaderRegistration(pool: pool, plan: "orders-status-code", instanceID: hostName,
///                                                 applicationName: "billing-web", applicationVersion: "4.2.0",
///                                                 reading: [.legacy, .modern], following: fleet, logger: logger)
/// ```
public final class ReaderRegistration: Sendable {
    /// How the heartbeats go.
    public struct Health: Sendable {
        /// When a heartbeat last succeeded: the registration's `last_seen_at`.
        public var lastSuccess: ContinuousClock.Instant
        /// Heartbeats that failed in a row since the last one that succeeded.
        public var consecutiveFailures: Int
        /// The error of the last heartbeat when it failed; nil once one succeeds again.
        public var lastError: (any Error)?

        /// Whether the last heartbeat succeeded.
        public var isHealthy: Bool { lastError == nil }
    }

    /// The ID the instance is registered under: the one it asked for, or that one with a
    /// random suffix when another live process held it.
    public var instanceID: String { registeredID.withLock { $0 } }
    /// The plan the instance is registered with.
    public let plan: String
    private let requestedID: String
    private let registeredID: Mutex<String>
    private let token = ReaderRegistry.makeToken()
    private let pool: PostgresPool
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let heartbeats = Mutex(Health(lastSuccess: .now, consecutiveFailures: 0, lastError: nil))
    private let logger: CutoverLogger
    /// Sends one heartbeat for an instance ID with the registration's secret.
    private let send: @Sendable (_ instanceID: String, _ token: String, PostgresConnection) throws -> Void
    /// The writer path whose epoch is reported, if any.
    private let fleet: FleetWriterPath?

    /// Registers with `plan` now (throwing if that fails) and heartbeats in the background
    /// afterwards, as an instance whose readers read the entity's formats of `paths`: the
    /// legacy writer's format, the modern writer's, or both (``RecordEntity/codec(for:)``).
    ///
    /// The registry stores them as any plan's formats are stored: the legacy format as `v1`,
    /// the modern as `v2`, which `phase readers` shows and the switch's and contract's checks read.
    /// The other parameters are those of
    /// ``init(pool:plan:instanceID:applicationName:applicationVersion:formats:interval:following:logger:)``.
    public convenience init(pool: PostgresPool, plan: String, instanceID: String, applicationName: String,
                            applicationVersion: String, reading paths: [SavePath], interval: Duration = .seconds(30),
                            following fleet: FleetWriterPath? = nil, logger: CutoverLogger = .disabled) async throws {
        try await self.init(pool: pool, plan: plan, instanceID: instanceID, applicationName: applicationName,
                            applicationVersion: applicationVersion, formats: paths.map(Self.storedFormat),
                            interval: interval, following: fleet, logger: logger)
    }

    /// The stored format a writer path's format is registered as.
    static func storedFormat(_ path: SavePath) -> DraftFormat {
        switch path {
        case .legacy: .v1
        case .modern: .v2
        }
    }

    /// Registers with `plan` now (throwing if that fails) and heartbeats in the background
    /// afterwards.
    ///
    /// - Parameters:
    ///   - plan: the plan whose data the instance reads in `formats`.
    ///   - following: the writer path the instance's router follows, of the same plan; its epoch
    ///     is reported with every heartbeat and after every change.
    ///   - logger: hears of each background heartbeat that fails (a warning) and of the first
    ///     that succeeds again (a notice), with the plan, the instance ID and the failures in a row.
    /// - Throws: ``ReaderRegistryError/followsAnotherPlan(registered:followed:)`` when `following`
    ///   is another plan's path; ``ReaderRegistryError`` when the registry refuses; a connection
    ///   error.
    public init(pool: PostgresPool, plan: String, instanceID: String, applicationName: String, applicationVersion: String,
                formats: [DraftFormat], interval: Duration = .seconds(30), following fleet: FleetWriterPath? = nil,
                logger: CutoverLogger = .disabled) async throws {
        if let fleet, fleet.plan != plan {
            throw ReaderRegistryError.followsAnotherPlan(registered: plan, followed: fleet.plan)
        }
        self.pool = pool
        self.plan = plan
        self.fleet = fleet
        self.logger = logger
        requestedID = instanceID
        registeredID = Mutex(instanceID)
        let names = formats.map(\.rawValue)
        send = { id, token, connection in
            try ReaderRegistry.heartbeat(plan: plan, instanceID: id, applicationName: applicationName,
                                         applicationVersion: applicationVersion, formats: names, token: token, on: connection)
        }
        let first = try await heartbeat()
        heartbeats.withLock { $0.lastSuccess = .now }
        task.withLock {
            $0 = Task { [weak self] in
                var reported = first
                while !Task.isCancelled {
                    // A change of the path followed is reported at once; otherwise a heartbeat
                    // every interval.
                    if let fleet, let held = reported {
                        _ = await fleet.waitUntil(timeout: interval) { $0 != held }
                    } else {
                        do { try await Task.sleep(for: interval) } catch { return }
                    }
                    guard !Task.isCancelled, let self else { return }
                    do {
                        reported = try await self.heartbeat()
                        self.recordSuccess()
                    } catch {
                        guard !Task.isCancelled else { return }
                        self.recordFailure(error, interval: interval)
                    }
                }
            }
        }
    }

    /// How the heartbeats go: when the last one succeeded, and the failures since.
    public var health: Health { heartbeats.withLock { $0 } }

    private func recordSuccess() {
        let failures = heartbeats.withLock { health -> Int in
            defer { health = Health(lastSuccess: .now, consecutiveFailures: 0, lastError: nil) }
            return health.consecutiveFailures
        }
        if failures > 0 {
            logger.log(.notice, "reader heartbeat works again after \(failures) failed in a row",
                          metadata: ["plan": plan, "instanceID": instanceID, "failures": "\(failures)"])
        }
    }

    private func recordFailure(_ error: any Error, interval: Duration) {
        let health = heartbeats.withLock { health -> Health in
            health.consecutiveFailures += 1
            health.lastError = error
            return health
        }
        let silent = (ContinuousClock.now - health.lastSuccess).components.seconds
        logger.log(.warning, "reader heartbeat failed, trying again in \(interval): \(error); a registration without a heartbeat "
                       + "for \(ReaderRegistry.defaultStaleAfter) goes stale, and the switch and contract checks stop counting it",
                       metadata: ["plan": plan, "instanceID": instanceID, "failures": "\(health.consecutiveFailures)",
                                  "secondsSinceLastHeartbeat": "\(silent)"])
    }

    /// One heartbeat under the registered ID, or under a new suffixed one when another live
    /// process holds it (it took over this registration after a silence, or never let go of the
    /// ID asked for); then the epoch followed, when there is a path to follow.
    ///
    /// - Returns: the setting whose epoch was reported, if any.
    @discardableResult
    func heartbeat() async throws -> FleetWriterPath.Setting? {
        let id = instanceID
        let token = token
        let send = send
        do {
            try await pool.withConnection { try send(id, token, $0) }
        } catch ReaderRegistryError.heldByAnotherProcess {
            let suffixed = Self.suffixed(requestedID)
            try await pool.withConnection { try send(suffixed, token, $0) }
            registeredID.withLock { $0 = suffixed }
        }
        guard let fleet else { return nil }
        // Read after the heartbeat: what is reported is never older than what routes the next save.
        let setting = fleet.current
        let registered = instanceID
        let plan = plan
        try await pool.withConnection {
            try ReaderRegistry.follows(instanceID: registered, token: token, plan: plan, epoch: setting.epoch, on: $0)
        }
        return setting
    }

    /// `id` with `-` and 8 random hexadecimal digits, within the registry's length limit.
    static func suffixed(_ id: String) -> String {
        let suffix = "-" + ReaderRegistry.makeToken().prefix(8)
        return String(id.prefix(ReaderRegistry.maximumTextLength - suffix.count)) + suffix
    }

    /// Stops heartbeating and removes the instance from the registry.
    public func stop() async throws {
        await endHeartbeats()
        let instanceID = instanceID
        let token = token
        let plan = plan
        try await pool.withConnection { try ReaderRegistry.leave(plan: plan, instanceID: instanceID, token: token, on: $0) }
    }

    /// Stops heartbeating without leaving: the instance goes stale on its own. Returns once no
    /// heartbeat is in flight, so that none lands after it.
    public func abandon() async {
        await endHeartbeats()
    }

    /// Cancels the heartbeats and waits for the one in flight, if any: a heartbeat that landed
    /// after `stop()` left would register the instance again.
    private func endHeartbeats() async {
        let running = task.withLock { task -> Task<Void, Never>? in
            task?.cancel()
            return task
        }
        await running?.value
    }

    deinit { task.withLock { $0?.cancel() } }
}
