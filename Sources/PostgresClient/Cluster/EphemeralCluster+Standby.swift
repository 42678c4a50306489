import Foundation

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
    public func startStandby(settings: [String: String] = [:], startTimeout: Duration = .seconds(60)) async throws
        -> EphemeralCluster
    {
        try await runOnDedicatedThread(named: "cutover-standby-start") {
            try self.startStandbyBlocking(settings: settings, startTimeout: startTimeout)
        }
    }

    private func startStandbyBlocking(settings: [String: String], startTimeout: Duration) throws -> EphemeralCluster {
        let binDirectory = (URL(fileURLWithPath: tools.pgCtl).resolvingSymlinksInPath().path as NSString).deletingLastPathComponent
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
            var lastError: (any Error)?
            for _ in 0..<3 {
                let port = try Self.freeLoopbackPort()
                var all = [
                    "port": String(port),
                    "unix_socket_directories": "'\(directory)/socket'",
                ]
                all.merge(standbySettings) { _, new in new }
                try tools.writeSettings(dataDirectory: directory + "/data", settings: all)
                do {
                    try tools.run(tools.pgCtl, ["start", "-D", directory + "/data", "-l", directory + "/server.log",
                                                "-w", "-t", String(startTimeout.components.seconds)],
                                  log: directory + "/pg_ctl.log", what: "pg_ctl start (standby)")
                    return EphemeralCluster(directory: directory, port: port, user: user, password: password,
                                            tools: tools)
                } catch {
                    lastError = error
                    let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
                    guard log.contains("could not bind") || log.contains("could not create any TCP/IP sockets") else {
                        throw error
                    }
                }
            }
            throw lastError!
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Promotes this standby to a primary (`pg_ctl promote`), waiting until it accepts writes.
    public func promote() throws {
        try tools.run(tools.pgCtl, ["promote", "-D", dataDirectory, "-w", "-t", "60"], log: nil, what: "pg_ctl promote")
    }
}
