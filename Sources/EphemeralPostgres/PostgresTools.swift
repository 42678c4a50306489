import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL server programs, and how to run them as a user PostgreSQL accepts.
package struct PostgresTools: Sendable {
    /// The environment variable that names the folder of server programs to use.
    static let folderVariable = "CUTOVER_PG_BINDIR"

    /// The folder holding `initdb`, `pg_ctl` and their siblings (`pg_basebackup`, `postgres`…).
    let folder: String
    /// The account the server runs as when this process is root: PostgreSQL refuses root.
    let serverAccount: ServerAccount?

    var initdb: String { folder + "/initdb" }
    var pgCtl: String { folder + "/pg_ctl" }

    /// Finds the server programs: in `CUTOVER_PG_BINDIR` when it is set, else on PATH, else in
    /// the newest `/usr/lib/postgresql/*/bin`.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresTools {
        let folder = try locateFolder(environment: environment)
        return PostgresTools(folder: folder, serverAccount: try ServerAccount.whenRoot(for: "a PostgreSQL server"))
    }

    /// The folder of server programs, chosen as ``locate(environment:)`` says.
    static func locateFolder(environment: [String: String]) throws -> String {
        if let chosen = environment[folderVariable], !chosen.isEmpty {
            let missing = ["initdb", "pg_ctl"].filter { !isProgram(chosen + "/" + $0) }
            guard missing.isEmpty else {
                throw EphemeralClusterError(
                    message: "\(folderVariable)=\(chosen) is no folder of PostgreSQL server programs: it has no runnable \(missing.joined(separator: " or ")) (point it at the bin folder of a PostgreSQL installation, or unset it)")
            }
            return chosen
        }
        guard let folder = searchFolders(environment: environment).first(where: { isProgram($0 + "/initdb") && isProgram($0 + "/pg_ctl") }) else {
            throw EphemeralClusterError(
                message: "cannot start a PostgreSQL server: initdb and pg_ctl were not found in \(folderVariable), on PATH or under /usr/lib/postgresql/*/bin (install the postgresql package, set \(folderVariable), or set DATABASE_URL to an existing server)")
        }
        // A folder on PATH may hold links to the programs only: their siblings are where the
        // links lead.
        return URL(fileURLWithPath: folder + "/pg_ctl").resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    /// Where PostgreSQL's programs are looked for: the folders of `PATH`, then every
    /// `/usr/lib/postgresql/*/bin`, the newest major first.
    package static func searchFolders(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        return (environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + versions.map { "/usr/lib/postgresql/\($0)/bin" }
    }

    private static func isProgram(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && !isFolder.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }

    /// A new folder under the temporary folder, owned by the server's account.
    func makePrivateDirectory() throws -> String {
        try ServerAccount.makePrivateDirectory(prefix: "cutover-pg", owner: serverAccount)
    }

    /// A folder for the server's socket, owned by the server's account.
    func makeSocketDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try handOver(path)
    }

    /// Writes a file readable only by the server's account.
    func writeFile(_ path: String, contents: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(contents.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw EphemeralClusterError(message: "cannot write \(path)")
        }
        try handOver(path)
    }

    /// Appends settings to `postgresql.conf`; later lines win, so a retry may append again.
    func writeSettings(dataDirectory: String, settings: [String: String]) throws {
        let lines = settings.keys.sorted().map { "\($0) = \(settings[$0]!)" }.joined(separator: "\n")
        let path = dataDirectory + "/postgresql.conf"
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw EphemeralClusterError(message: "cannot open \(path) to write the server's settings")
        }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n# Set by Cutover's ephemeral cluster\n" + lines + "\n").utf8))
    }

    /// Runs a server program to completion (as the server's account when we are root).
    ///
    /// - Parameter log: where its output goes; on failure the output's last lines are quoted.
    func run(_ program: String, _ arguments: [String], log: String?, what: String) throws {
        let logPath = log ?? NSTemporaryDirectory() + "cutover-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { if log == nil { try? FileManager.default.removeItem(atPath: logPath) } }
        let status = try ChildProcess.run(asServerAccount([program] + arguments), output: logPath)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n").suffix(5).joined(separator: " | ")
            throw EphemeralClusterError(message: "\(what) failed with status \(status): \(tail)")
        }
    }

    /// Starts a detached process that stops the server (if one runs) and deletes `directory`
    /// once this process has gone, unless ``EphemeralCluster/stop()`` deleted it first.
    func startWatchdog(directory: String) {
        let runAs = serverAccount?.shellPrefix ?? ""
        let script = """
            while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
            if [ -f "$2/data/postmaster.pid" ]; then \(runAs)"$3" stop -D "$2/data" -m immediate -w >/dev/null 2>&1; fi
            rm -rf "$2"
            """
        // setsid --fork: a new session, so that Ctrl-C on the terminal does not reach it, and a
        // child of init, so that it is never left a zombie of ours.
        _ = try? ChildProcess.run(["/usr/bin/setsid", "--fork", "/bin/sh", "-c", script, "cutover-watchdog",
                                   String(getpid()), directory, pgCtl], output: nil)
    }

    /// The command line that runs `command` as the server's account.
    private func asServerAccount(_ command: [String]) -> [String] {
        serverAccount?.command(command) ?? command
    }

    private func handOver(_ path: String) throws {
        try serverAccount?.handOver(path)
    }
}
