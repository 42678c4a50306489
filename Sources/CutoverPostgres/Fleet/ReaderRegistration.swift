import Cutover
import PostgresClient
import Synchronization

/// Keeps one Swift application instance registered: a heartbeat now and every `interval`, and
/// a goodbye on ``stop()``.
///
/// The registration carries a secret made for this process (``ReaderRegistry/makeToken()``),
/// so no other process can rewrite or remove it while it heartbeats. When another live process
/// holds the instance ID asked for (a copy of this instance, or this instance before a crash,
/// not yet silent for ``ReaderRegistry/takeoverAfter``), the instance registers under that ID
/// with a random suffix instead, so that it is never missing from the registry.
///
/// ```swift
/// let registration = try await ReaderRegistration(pool: pool, instanceID: hostName,
///                                                 applicationName: "billing-web", applicationVersion: "4.2.0",
///                                                 formats: [.v1, .v2])
/// ```
public final class ReaderRegistration: Sendable {
    /// The ID the instance is registered under: the one it asked for, or that one with a
    /// random suffix when another live process held it.
    public var instanceID: String { registeredID.withLock { $0 } }
    private let requestedID: String
    private let registeredID: Mutex<String>
    private let token = ReaderRegistry.makeToken()
    private let pool: PostgresPool
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Sends one heartbeat for an instance ID with the registration's secret.
    private let send: @Sendable (_ instanceID: String, _ token: String, PostgresConnection) throws -> Void

    /// Registers now (throwing if that fails) and heartbeats in the background afterwards.
    ///
    /// - Parameter onFailure: receives each background heartbeat's error; the next heartbeat
    ///   tries again.
    public init(pool: PostgresPool, instanceID: String, applicationName: String, applicationVersion: String,
                formats: [DraftFormat], interval: Duration = .seconds(30),
                onFailure: @escaping @Sendable (any Error) -> Void = { _ in }) async throws {
        self.pool = pool
        requestedID = instanceID
        registeredID = Mutex(instanceID)
        let names = formats.map(\.rawValue)
        send = { id, token, connection in
            try ReaderRegistry.heartbeat(instanceID: id, applicationName: applicationName,
                                         applicationVersion: applicationVersion, formats: names, token: token, on: connection)
        }
        try await heartbeat()
        task.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: interval)
                    } catch {
                        return
                    }
                    guard let self else { return }
                    do { try await self.heartbeat() } catch { onFailure(error) }
                }
            }
        }
    }

    /// One heartbeat under the registered ID, or under a new suffixed one when another live
    /// process holds it (it took over this registration after a silence, or never let go of the
    /// ID asked for).
    func heartbeat() async throws {
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
    }

    /// `id` with `-` and 8 random hexadecimal digits, within the registry's length limit.
    static func suffixed(_ id: String) -> String {
        let suffix = "-" + ReaderRegistry.makeToken().prefix(8)
        return String(id.prefix(ReaderRegistry.maximumTextLength - suffix.count)) + suffix
    }

    /// Stops heartbeating and removes the instance from the registry.
    public func stop() async throws {
        task.withLock { $0?.cancel() }
        let instanceID = instanceID
        let token = token
        try await pool.withConnection { try ReaderRegistry.leave(instanceID: instanceID, token: token, on: $0) }
    }

    /// Stops heartbeating without leaving: the instance goes stale on its own.
    public func abandon() {
        task.withLock { $0?.cancel() }
    }

    deinit { task.withLock { $0?.cancel() } }
}
