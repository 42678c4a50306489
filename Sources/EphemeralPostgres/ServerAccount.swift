import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The account that server programs run as when this process is root: PostgreSQL,
/// pg_autoctl and PgBouncer all refuse to run as root, so they run as `postgres`.
///
/// ```swift
/// let account = try ServerAccount.whenRoot(for: "PgBouncer")
/// let folder = try ServerAccount.makePrivateDirectory(prefix: "cutover-pgbouncer", owner: account)
/// ```
package struct ServerAccount: Sendable {
    /// The account's name.
    package let name: String
    /// Its user ID.
    package let uid: uid_t
    /// Its group ID.
    package let gid: gid_t

    /// The `postgres` account when this process is root, nil otherwise; `program` names what
    /// is to run, for the error when there is no such account.
    package static func whenRoot(for program: String) throws -> ServerAccount? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw EphemeralClusterError(
                message: "cannot run \(program) as root: it refuses root and there is no 'postgres' user to run it as (install the postgresql package, or run as another user)")
        }
        return ServerAccount(name: "postgres", uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// Gives `path` to the account.
    package func handOver(_ path: String) throws {
        guard chown(path, uid, gid) == 0 else {
            throw EphemeralClusterError(message: "cannot give \(path) to the \(name) user: errno \(errno)")
        }
    }

    /// The command line that runs `command` as this account.
    package func command(_ command: [String]) -> [String] {
        [Self.runuser, "-u", name, "--"] + command
    }

    /// What a shell line puts before a command to run it as this account.
    package var shellPrefix: String { "\(Self.runuser) -u \(name) -- " }

    /// A new folder `prefix-XXXXXX` under the temporary folder, owned by `owner` when given.
    package static func makePrivateDirectory(prefix: String, owner: ServerAccount?) throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw EphemeralClusterError(message: "cannot create a temporary folder under \(base): errno \(errno)")
        }
        let path = String(cString: made)
        try owner?.handOver(path)
        return path
    }

    /// runuser lives in /usr/sbin on Debian and /sbin on some others.
    private static let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/runuser"
}
