import EphemeralPostgres
import Foundation
import PostgresClient
#if canImport(Glibc)
import Glibc
#endif

/// `pg_autoctl` and the PostgreSQL it manages, run as a user PostgreSQL accepts, each process
/// with an environment of its own folder only.
struct AutoFailoverTools: Sendable {
    let pgAutoctl: String
    let pgCtl: String
    /// The account the processes run as when this process is root.
    let serverAccount: ServerAccount?

    static let missing = "pg_autoctl was not found on PATH or under /usr/lib/postgresql/*/bin with the pgautofailover extension installed: apt-get install postgresql-15-auto-failover"

    /// Finds `pg_autoctl`, and the `pg_ctl` of the newest PostgreSQL with pg_auto_failover's
    /// extension installed.
    static func locate() throws -> AutoFailoverTools {
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
            .filter { FileManager.default.fileExists(atPath: "/usr/share/postgresql/\($0)/extension/pgautofailover.control") }
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + versions.map { "/usr/lib/postgresql/\($0)/bin" } + ["/usr/bin"]
        guard let version = versions.first,
              let autoctl = folders.map({ $0 + "/pg_autoctl" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw AutoFailoverClusterError(message: missing)
        }
        return AutoFailoverTools(pgAutoctl: autoctl, pgCtl: "/usr/lib/postgresql/\(version)/bin/pg_ctl", serverAccount: try ServerAccount.whenRoot(for: "pg_autoctl"))
    }

    /// A new folder under the temporary folder, owned by the server's account.
    func makePrivateDirectory() throws -> String {
        try ServerAccount.makePrivateDirectory(prefix: "cutover-ha", owner: serverAccount)
    }

    /// Settings that suit a test machine better than pg_autoctl's tuning for the whole host
    /// (which gives each node a quarter of its memory), written where they win over it.
    /// `checkpoint_completion_target = 0` makes the checkpoint a base backup waits for quick.
    /// `extra` lines follow them.
    func appendSettings(dataDirectory: String, extra: String = "") throws {
        let lines = """

            # Set by Cutover's failover test harness
            listen_addresses = '127.0.0.1'
            shared_buffers = '128MB'
            effective_cache_size = '512MB'
            maintenance_work_mem = '64MB'
            work_mem = '4MB'
            wal_keep_size = '256MB'
            checkpoint_completion_target = 0
            max_connections = 200
            \(extra)
            """
        let path = dataDirectory + "/postgresql.auto.conf"
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw AutoFailoverClusterError(message: "cannot open \(path) to write the server's settings")
        }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines.utf8))
    }

    /// The command line that runs `pg_autoctl arguments` as the server's account, with an
    /// environment that keeps its configuration, state and pid files in `directory`.
    func command(_ arguments: [String], directory: String) -> [String] {
        let environment = [
            "PATH=" + URL(fileURLWithPath: pgCtl).deletingLastPathComponent().path + ":/usr/bin:/bin",
            "HOME=" + directory, "LANG=C.UTF-8",
            "XDG_CONFIG_HOME=" + directory + "/config", "XDG_DATA_HOME=" + directory + "/share",
            "XDG_RUNTIME_DIR=" + directory + "/run",
        ]
        let call = ["/usr/bin/env", "-i"] + environment + [pgAutoctl] + arguments
        return serverAccount?.command(call) ?? call
    }

    /// Runs `pg_autoctl arguments` to completion; on failure the log's last lines are quoted.
    func run(directory: String, _ arguments: [String], log: String?, what: String) throws {
        let logPath = log ?? directory + "/pg_autoctl-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { if log == nil { try? FileManager.default.removeItem(atPath: logPath) } }
        let status = try ChildProcess.run(command(arguments, directory: directory), output: logPath)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n").suffix(5).joined(separator: " | ")
            throw AutoFailoverClusterError(message: "\(what) failed with status \(status): \(tail)")
        }
    }

    /// Starts `pg_autoctl arguments` as a service that runs until stopped.
    func spawn(_ arguments: [String], directory: String, log: String) throws -> pid_t {
        try ChildProcess.spawn(command(arguments, directory: directory), output: log)
    }

    /// Waits for `pids` to end, up to `limit`; those still running are left to ``stopServers(directory:)``.
    func reap(_ pids: [pid_t], within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        for pid in pids {
            // One that is not our child (any more) has nothing to reap.
            _ = try? ChildProcess.wait(for: pid, within: max(.zero, deadline - ContinuousClock.now))
        }
    }

    /// Stops, at once, any server of `directory` that is still running.
    func stopServers(directory: String) {
        for data in ["node1", "node2", "monitor"].map({ directory + "/" + $0 })
        where FileManager.default.fileExists(atPath: data + "/postmaster.pid") {
            let stop = [pgCtl, "stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]
            _ = try? ChildProcess.run(serverAccount?.command(stop) ?? stop, output: nil)
        }
    }

    /// Starts a detached process that stops every service and server of `directory` and deletes
    /// it once this process has gone, unless ``AutoFailoverCluster/stop()`` deleted it first.
    func startWatchdog(directory: String) {
        let stopService = command(["stop", "--immediate", "--pgdata"], directory: directory)
            .map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        let runAs = serverAccount?.shellPrefix ?? ""
        let script = """
            while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
            [ -d "$2" ] || exit 0
            for node in node1 node2 monitor; do \(stopService) "$2/$node" >/dev/null 2>&1; done
            sleep 3
            for node in node1 node2 monitor; do
              if [ -f "$2/$node/postmaster.pid" ]; then \(runAs)"$3" stop -D "$2/$node" -m immediate -w >/dev/null 2>&1; fi
            done
            rm -rf "$2"
            """
        // setsid --fork: a new session, so that Ctrl-C on the terminal does not reach it, and a
        // child of init, so that it is never left a zombie of ours.
        _ = try? ChildProcess.run(["/usr/bin/setsid", "--fork", "/bin/sh", "-c", script, "cutover-ha-watchdog",
                                   String(getpid()), directory, pgCtl], output: nil)
    }

}
