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
        let baseBackup = try program("pg_basebackup", toStart: "a standby")
        let directory = try tools.makePrivateDirectory()
        tools.startWatchdog(directory: directory)
        do {
            // The backup's primary_conninfo names the passfile, so that the password is in
            // neither the standby's settings nor a command line.
            let source = try replicationSource(in: directory, applicationName: "standby_\(directory.split(separator: "-").last ?? "")")
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

    /// The path of `name`, one of the cluster's own programs, checked to be there.
    func program(_ name: String, toStart what: String) throws -> String {
        let path = binDirectory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw EphemeralClusterError(message: "cannot start \(what): \(path) was not found beside pg_ctl")
        }
        return path
    }

    /// A connection string to this cluster over loopback for a replication client started in
    /// `directory`, as `applicationName`: its password goes in a passfile there, never on a
    /// command line.
    func replicationSource(in directory: String, applicationName: String) throws -> String {
        let passfile = directory + "/pgpass"
        try tools.writeFile(passfile, contents: "127.0.0.1:\(port):*:\(user):\(password)\n")
        return "host=127.0.0.1 port=\(port) user=\(user) passfile=\(passfile) application_name=\(applicationName)"
    }
}
