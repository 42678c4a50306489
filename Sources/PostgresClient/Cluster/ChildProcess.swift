import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with `posix_spawn` and waits for it with `waitpid`.
///
/// Foundation's `Process` waits through a run loop and a signal source, which stop working
/// while the process is exiting and can miss a child's exit when many run at once; this needs
/// neither. Blocking: call it from a thread of its own.
public enum ChildProcess {
    /// Runs `arguments[0]` (a path) to completion and returns its exit status.
    ///
    /// - Parameter output: a file that receives its standard output and error (appended), or
    ///   nil for /dev/null. Standard input is /dev/null.
    public static func run(_ arguments: [String], output: String?) throws -> Int32 {
        try wait(for: spawn(arguments, output: output))
    }

    /// Waits for a child to end and returns its exit status, or 128 + the signal that ended it.
    public static func wait(for pid: pid_t) throws -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw EphemeralClusterError(message: "waitpid failed for process \(pid): errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Starts `arguments[0]` and returns its process ID without waiting.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; this process's when nil.
    ///   - output: a file receiving standard output (appended), /dev/null when nil.
    ///   - errorOutput: a file receiving standard error; the same as `output` when nil.
    public static func spawn(_ arguments: [String], environment: [String: String]? = nil, output: String?,
                             errorOutput: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if let errorOutput {
            posix_spawn_file_actions_addopen(&actions, 2, errorOutput, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // An empty signal mask and default handlers: the child must not inherit what a thread
        // of this process blocked or ignored, or a service that stops on SIGTERM never stops.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGALRM, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = envp.map { envp in envp.withUnsafeBufferPointer { posix_spawn(&pid, arguments[0], &actions, &attributes, argv, $0.baseAddress) } }
            ?? posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw EphemeralClusterError(message: "cannot run \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
