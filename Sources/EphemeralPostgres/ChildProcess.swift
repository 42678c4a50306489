import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with `posix_spawn` and reaps it with `wait4`: the one way this package
/// starts a child process (server programs, pgbench, psql, the `phase` binary under test).
///
/// Foundation's `Process` waits through a run loop and a signal source, which stop working
/// while the process is exiting and can miss a child's exit when many run at once; this needs
/// neither. Every wait is blocking: call it from a thread of its own.
///
/// ```swift
/// let pid = try ChildProcess.spawn(["/usr/bin/env", "true"], output: nil)
/// guard let status = try ChildProcess.wait(for: pid, within: .seconds(10)) else { /* still running */ }
/// ```
package enum ChildProcess {
    /// How a child ended, and what it cost.
    package struct Termination: Sendable {
        /// Its exit status, or 128 + the signal that ended it (as a shell reports it).
        package var status: Int32
        /// The user and system CPU time it used.
        package var cpuTime: Duration
    }

    /// Runs `arguments[0]` (a path) to completion and returns its exit status.
    ///
    /// - Parameter output: a file that receives its standard output and error (appended), or
    ///   nil for /dev/null. Standard input is /dev/null.
    package static func run(_ arguments: [String], output: String?) throws -> Int32 {
        try wait(for: spawn(arguments, output: output))
    }

    /// Waits for a child to end and returns its exit status, or 128 + the signal that ended it.
    package static func wait(for pid: pid_t) throws -> Int32 {
        try waitForTermination(of: pid).status
    }

    /// Waits for a child to end and returns its status and the CPU time it used.
    package static func waitForTermination(of pid: pid_t) throws -> Termination {
        while true {
            if let ended = try reap(pid, blocking: true) { return ended }
        }
    }

    /// Waits at most `limit` for a child to end: its exit status, or nil if it is still running
    /// then (it is left running; kill it and ``wait(for:)`` to reap it).
    package static func wait(for pid: pid_t, within limit: Duration) throws -> Int32? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let ended = try reap(pid, blocking: false) { return ended.status }
            guard ContinuousClock.now < deadline else { return nil }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// The child's exit status if it has ended (reaping it), nil while it runs.
    package static func exitStatus(of pid: pid_t) throws -> Int32? {
        try reap(pid, blocking: false)?.status
    }

    /// Starts `arguments[0]` and returns its process ID without waiting.
    ///
    /// The child starts with an empty signal mask and default handlers, whatever this process
    /// blocked or ignored: a server that stops on SIGTERM, or pgbench, which ends a timed run
    /// with SIGALRM, would otherwise never stop. It inherits no descriptor but its standard
    /// input, output and error: a long-lived child (a server, a watchdog) holding a copy of
    /// another thread's socket would keep that connection open after its owner closed it.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; this process's when nil.
    ///   - output: a file receiving standard output (appended), /dev/null when nil.
    ///   - errorOutput: a file receiving standard error; the same as `output` when nil.
    package static func spawn(_ arguments: [String], environment: [String: String]? = nil, output: String?,
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
        closeInheritedDescriptors(&actions)
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
            throw ChildProcessError(message: "cannot run \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Adds to `actions` the closing of every descriptor above standard error.
    ///
    /// glibc 2.34 and later close them all in one action, which the C headers do not show to
    /// Swift, so it is looked up by name; without it, each descriptor open now is closed.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Reaps the child if it has ended (or, when `blocking`, once it ends); nil while it runs.
    private static func reap(_ pid: pid_t, blocking: Bool) throws -> Termination? {
        var status: Int32 = 0
        var usage = rusage()
        let reaped = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
        if reaped == 0 || (reaped < 0 && errno == EINTR) { return nil }
        guard reaped == pid else { throw ChildProcessError(message: "wait4 failed for process \(pid): errno \(errno)") }
        let cpu = [usage.ru_utime, usage.ru_stime].reduce(Duration.zero) { total, time in
            total + .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        return Termination(status: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), cpuTime: cpu)
    }
}

/// A child process could not be started or waited for.
package struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// One line saying what failed.
    package var message: String
    package var description: String { message }
}
