import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `pg_receivewal` keeping a cluster's WAL in a folder of its own, as the backup tools that
/// stream WAL run it: a client of a WAL sender that replies and replays nothing.
package final class WALReceiver: Sendable {
    /// The `application_name` it gives the cluster's WAL sender.
    package let applicationName: String
    private let pid: pid_t
    private let directory: String

    fileprivate init(applicationName: String, pid: pid_t, directory: String) {
        self.applicationName = applicationName
        self.pid = pid
        self.directory = directory
    }

    /// Stops it (SIGTERM, then SIGKILL after 10 s) and deletes its folder.
    package func stop() {
        kill(pid, SIGTERM)
        let ended: Int32? = try? ChildProcess.wait(for: pid, within: .seconds(10))
        if ended == nil {
            kill(pid, SIGKILL)
            _ = try? ChildProcess.wait(for: pid)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension EphemeralCluster {
    /// Starts `pg_receivewal` (from the cluster's own programs) streaming this cluster's WAL
    /// over loopback, as `applicationName`. It exits by itself when the cluster stops
    /// (`--no-loop`); ``WALReceiver/stop()`` stops it before.
    package func startWALReceiver(applicationName: String = "pg_receivewal") throws -> WALReceiver {
        let receiveWAL = try program("pg_receivewal", toStart: "a WAL receiver")
        let directory = try tools.makePrivateDirectory()
        tools.startWatchdog(directory: directory)
        do {
            let source = try replicationSource(in: directory, applicationName: applicationName)
            let wal = directory + "/wal"
            try FileManager.default.createDirectory(atPath: wal, withIntermediateDirectories: false)
            let pid = try ChildProcess.spawn([receiveWAL, "-D", wal, "-d", source, "--no-loop"], output: directory + "/receivewal.log")
            return WALReceiver(applicationName: applicationName, pid: pid, directory: directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }
}
