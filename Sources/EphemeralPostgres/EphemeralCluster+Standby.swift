import Foundation
import PostgresClient

extension EphemeralCluster {
    /// Starts a hot standby of this cluster: a base backup taken with `pg_basebackup -R`,
    /// streaming from this cluster over loopback, in a temporary folder of its own.
    ///
    /// The standby has its own port, socket folder and watchdog; ``stop()`` stops it and deletes
    /// its folder, and stopping the primary first is fine. It accepts read-only sessions once
    /// it is consistent, which is when this returns.
    ///
    /// ```swift
    /// let standby = try await primary.startStandby()
    /// defer { standby.stop() }
    /// ```
    ///
    /// - Parameter settings: server settings for the standby only (for example
    ///   `hot_standby_feedback` or `max_standby_streaming_delay`).
    package func startStandby(settings: [String: String] = [:], startTimeout: Duration = .seconds(60)) async throws
        -> EphemeralCluster
    {
        try await runOnDedicatedThread(named: "cutover-standby-start") {
            try self.startStandbyBlocking(settings: settings, startTimeout: startTimeout)
        }
    }

    private func startStandbyBlocking(settings: [String: String], startTimeout: Duration) throws -> EphemeralCluster {
        let baseBackup = binDirectory + "/pg_basebackup"
        guard FileManager.default.isExecutableFile(atPath: baseBackup) else {
            throw EphemeralClusterError(message: "cannot start a standby: \(baseBackup) was not found beside pg_ctl")
        }
        let directory = try tools.makePrivateDirectory()
        tools.startWatchdog(directory: directory)
        do {
            // The password goes in a passfile the backup's primary_conninfo names, so that it
            // is neither on a command line nor in the standby's settings.
            let passfile = directory + "/pgpass"
            try tools.writeFile(passfile, contents: "127.0.0.1:\(port):*:\(user):\(password)\n")
            let source = "host=127.0.0.1 port=\(port) user=\(user) passfile=\(passfile) application_name=standby_\(directory.split(separator: "-").last ?? "")"
            try tools.run(baseBackup, ["-D", directory + "/data", "-d", source, "-R", "-X", "stream",
                                       "--checkpoint=fast", "--no-sync"],
                          log: directory + "/basebackup.log", what: "pg_basebackup")
            try tools.makeSocketDirectory(directory + "/socket")
            var standbySettings = settings
            standbySettings["hot_standby"] = standbySettings["hot_standby"] ?? "on"
            let port = try Self.startOnFreePort(tools: tools, directory: directory, startTimeout: startTimeout,
                                                what: "pg_ctl start (standby)") { port in
                // Later lines of postgresql.conf win over the primary's, copied by the backup.
                ["port": String(port), "unix_socket_directories": "'\(directory)/socket'"]
                    .merging(standbySettings) { _, new in new }
            }
            return EphemeralCluster(directory: directory, port: port, user: user, password: password, tools: tools)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Promotes this standby to a primary (`pg_ctl promote`), waiting until it accepts writes.
    package func promote() throws {
        try tools.run(tools.pgCtl, ["promote", "-D", dataDirectory, "-w", "-t", "60"], log: nil, what: "pg_ctl promote")
    }
}
