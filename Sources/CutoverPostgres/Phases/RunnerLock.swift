import Foundation
import PostgresClient

/// The session advisory lock that lets one phase runner at a time work on a database.
///
/// Taken without waiting on the runner's own connection and held until that connection closes,
/// so a runner that dies (even by SIGKILL) releases it with its session.
public enum RunnerLock {
    /// The advisory lock's two keys: "cutover" and "runner" in ASCII, as 32-bit integers.
    static let keys: (Int32, Int32) = (0x6375_746f, 0x7275_6e72)

    /// Who holds the lock.
    public struct Holder: Sendable, Equatable, CustomStringConvertible {
        /// The holder's server process.
        public var pid: Int32
        /// The holder's `application_name`.
        public var applicationName: String
        /// When the holder's session began (it takes the lock as it starts).
        public var since: Date?

        public var description: String {
            let name = applicationName.isEmpty ? "no application_name" : "application_name \(applicationName)"
            let time = since.map { " since \(ISO8601DateFormatter().string(from: $0))" } ?? ""
            return "pid \(pid) (\(name))\(time)"
        }
    }

    /// Takes the lock, or throws ``RunnerLockError/held(by:)`` at once naming the holder.
    public static func acquire(on connection: PostgresConnection) throws {
        let taken = try connection.query("SELECT pg_try_advisory_lock(\(keys.0), \(keys.1)) AS taken")[0]
            .decode(Bool.self, "taken")
        guard !taken else { return }
        throw RunnerLockError.held(by: try holder(on: connection))
    }

    /// Releases the lock if this session holds it.
    public static func release(on connection: PostgresConnection) throws {
        try connection.query("SELECT pg_advisory_unlock(\(keys.0), \(keys.1))")
    }

    /// The session holding the lock, if any.
    public static func holder(on connection: PostgresConnection) throws -> Holder? {
        let rows = try connection.query("""
            SELECT a.pid, coalesce(a.application_name, '') AS name, a.backend_start
              FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND l.classid = \(Int64(UInt32(bitPattern: keys.0)))::oid AND l.objid = \(Int64(UInt32(bitPattern: keys.1)))::oid
               AND l.objsubid = 2
             LIMIT 1
            """)
        guard let row = rows.first else { return nil }
        return Holder(pid: try row.decode(Int32.self, "pid"), applicationName: try row.decode(String.self, "name"),
                      since: try row.decode(Date?.self, "backend_start"))
    }
}

/// Another phase runner is at work.
public enum RunnerLockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The lock is held by this session (nil when it was released before it could be named).
    case held(by: RunnerLock.Holder?)

    public var description: String {
        switch self {
        case .held(let holder?): "another phase runner holds the lock: \(holder); try again when it has finished"
        case .held(nil): "another phase runner held the lock a moment ago; try again"
        }
    }
}
