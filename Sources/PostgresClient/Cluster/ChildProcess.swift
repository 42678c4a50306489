import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with `posix_spawn` and waits for it with `waitpid`.
///
/// Foundation's `Process` waits through a run loop and a signal source, which stop working
/// while the process is exiting; stopping a cluster from an `atexit` handler needs neither.
enum ChildProcess {
    /// Runs `arguments[0]` (a path) to completion and returns its exit status.
    ///
    /// - Parameter output: a file that receives its standard output and error (appended), or
    ///   nil for /dev/null. Standard input is /dev/null.
    static func run(_ arguments: [String], output: String?) throws -> Int32 {
        let pid = try spawn(arguments, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw EphemeralClusterError(message: "waitpid failed for \(arguments[0]): errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Starts `arguments[0]` and returns its process ID without waiting.
    static func spawn(_ arguments: [String], output: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard result == 0 else {
            throw EphemeralClusterError(message: "cannot run \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
