import Cutover
import Foundation
import PostgresClient
import Synchronization

/// One application instance in the reader registry.
public struct ReaderInstance: Sendable, Equatable {
    /// The instance's ID, unique in the fleet.
    public var instanceID: String
    /// The application's name.
    public var applicationName: String
    /// The application's version.
    public var applicationVersion: String
    /// The stored formats its readers understand ("v1", "v2").
    public var formats: [String]
    /// When it first registered.
    public var registeredAt: Date
    /// When it last heartbeat.
    public var lastSeenAt: Date
    /// Whether it heartbeat within the staleness limit it was listed with.
    public var isLive: Bool

    /// Whether its readers understand the v2 format.
    public var readsV2: Bool { formats.contains(DraftFormat.v2.rawValue) }
}

/// The registry of application instances and the formats their readers understand, in
/// `cutover.readers`.
///
/// Swift applications use ``ReaderRegistration``; any other application heartbeats with plain
/// SQL, every half minute or so:
///
/// ```sql
/// SELECT cutover.reader_heartbeat('billing-web-7f3a', 'billing-web', '4.2.0', ARRAY['v1', 'v2']);
/// SELECT cutover.reader_leave('billing-web-7f3a');   -- on a clean shutdown
/// ```
public enum ReaderRegistry {
    /// How long an instance stays live after its last heartbeat, unless told otherwise.
    public static let defaultStaleAfter: Duration = .seconds(120)

    /// Registers an instance or refreshes it.
    public static func heartbeat(instanceID: String, applicationName: String, applicationVersion: String,
                                 formats: [String], on connection: PostgresConnection) throws {
        try connection.query("""
            SELECT cutover.reader_heartbeat(\(instanceID), \(applicationName), \(applicationVersion), \(formats.joinedAsTextArray)::text[])
            """)
    }

    /// Removes an instance.
    public static func leave(instanceID: String, on connection: PostgresConnection) throws {
        try connection.query("SELECT cutover.reader_leave(\(instanceID))")
    }

    /// Every registered instance, live ones first, with liveness judged against `staleAfter`.
    public static func list(staleAfter: Duration = defaultStaleAfter, on connection: PostgresConnection) throws -> [ReaderInstance] {
        let seconds = Double(staleAfter.components.seconds) + Double(staleAfter.components.attoseconds) / 1e18
        return try connection.query("""
            SELECT instance_id, application_name, application_version, array_to_json(formats)::text AS formats,
                   registered_at, last_seen_at, last_seen_at > now() - make_interval(secs => \(seconds)) AS live
              FROM cutover.readers ORDER BY live DESC, application_name, instance_id
            """).map { row in
            ReaderInstance(instanceID: try row.decode(String.self, "instance_id"),
                           applicationName: try row.decode(String.self, "application_name"),
                           applicationVersion: try row.decode(String.self, "application_version"),
                           formats: try row.decodeJSON([String].self, "formats"),
                           registeredAt: try row.decode(Date.self, "registered_at"),
                           lastSeenAt: try row.decode(Date.self, "last_seen_at"),
                           isLive: try row.decode(Bool.self, "live"))
        }
    }
}

/// Keeps one Swift application instance registered: a heartbeat now and every `interval`, and
/// a goodbye on ``stop()``.
///
/// ```swift
/// let registration = try await ReaderRegistration(pool: pool, instanceID: hostName,
///                                                 applicationName: "billing-web", applicationVersion: "4.2.0",
///                                                 formats: [.v1, .v2])
/// ```
public final class ReaderRegistration: Sendable {
    /// The instance's ID.
    public let instanceID: String
    private let pool: PostgresPool
    private let task: Mutex<Task<Void, Never>?>

    /// Registers now (throwing if that fails) and heartbeats in the background afterwards.
    public init(pool: PostgresPool, instanceID: String, applicationName: String, applicationVersion: String,
                formats: [DraftFormat], interval: Duration = .seconds(30)) async throws {
        self.instanceID = instanceID
        self.pool = pool
        let names = formats.map(\.rawValue)
        let beat: @Sendable () async throws -> Void = {
            try await pool.withConnection { connection in
                try ReaderRegistry.heartbeat(instanceID: instanceID, applicationName: applicationName,
                                             applicationVersion: applicationVersion, formats: names, on: connection)
            }
        }
        try await beat()
        task = Mutex(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                try? await beat()
            }
        })
    }

    /// Stops heartbeating and removes the instance from the registry.
    public func stop() async throws {
        task.withLock { $0?.cancel() }
        let instanceID = instanceID
        try await pool.withConnection { try ReaderRegistry.leave(instanceID: instanceID, on: $0) }
    }

    /// Stops heartbeating without leaving: the instance goes stale on its own.
    public func abandon() {
        task.withLock { $0?.cancel() }
    }

    deinit { task.withLock { $0?.cancel() } }
}

extension Array where Element == String {
    /// A PostgreSQL text[] literal: `{"a","b"}` with quotes and backslashes escaped.
    var joinedAsTextArray: String {
        "{" + map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }
}
