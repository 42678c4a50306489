import Foundation

/// The benchmark process's peak resident memory (VmHWM), which Linux lets a process reset.
enum PeakMemory {
    /// Resets the peak to the current resident size (`/proc/self/clear_refs`, value 5).
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The peak resident size since the last reset, in KiB; nil where /proc does not say.
    static func highWaterMark() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }
}
