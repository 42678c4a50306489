import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time spent by this process and by the PostgreSQL server, for the CPU cost of a save on
/// each side: steadier than wall-clock rates on a shared machine, and it says where time goes.
enum CPUClock {
    /// User and system CPU time of this process so far, all threads.
    static func ownProcess() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    private static func duration(_ time: timeval) -> Duration {
        .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
    }

    /// CPU time of a server on this machine: the postmaster, the children it has reaped and
    /// those still running (backends, WAL writer, checkpointer, autovacuum).
    struct Server: Sendable {
        let postmaster: pid_t
        private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

        /// The server whose data folder is `dataDirectory`, when its postmaster.pid is readable.
        init?(dataDirectory: String) {
            guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
                  let first = text.split(separator: "\n").first, let pid = pid_t(first) else { return nil }
            postmaster = pid
        }

        /// CPU time used so far.
        func used() -> Duration {
            var ticks = fields(of: postmaster).map { $0[11] + $0[12] + $0[13] + $0[14] } ?? 0
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let pid = pid_t(entry), pid != postmaster, let stat = fields(of: pid),
                      stat[1] == Int(postmaster) else { continue }
                ticks += stat[11] + stat[12]
            }
            return .milliseconds(Int64(Double(ticks) / ticksPerSecond * 1000))
        }

        /// The numeric fields of /proc/PID/stat after the command name: [0] state (0), [1] ppid,
        /// …, [11] utime, [12] stime, [13] cutime, [14] cstime.
        private func fields(of pid: pid_t) -> [Int]? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return nil }
            let rest = text[text.index(after: close)...].split(separator: " ")
            guard rest.count > 15 else { return nil }
            return rest.map { Int($0) ?? 0 }
        }
    }
}
