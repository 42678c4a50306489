import Foundation

/// The whole run's results: a table for people and JSON for machines.
struct BenchReport: Sendable, Encodable {
    /// Where the figures were taken.
    struct Machine: Sendable, Encodable {
        var cores: Int
        var memoryGiB: Double
        var cpu: String
        var kernel: String
        var server: String
        var postgres: String

        static func current(server: String, postgres: String) -> Machine {
            let info = ProcessInfo.processInfo
            let cpu = ((try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")
                .split(separator: "\n").first { $0.hasPrefix("model name") }
                .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) }
            return Machine(cores: info.activeProcessorCount,
                           memoryGiB: (Double(info.physicalMemory) / 1_073_741_824 * 10).rounded() / 10,
                           cpu: cpu ?? "unknown", kernel: info.operatingSystemVersionString,
                           server: server, postgres: postgres)
        }
    }

    var mode: String
    var startedAt: String
    var machine: Machine
    var scenarios: [ScenarioResult]

    enum CodingKeys: String, CodingKey {
        case mode, startedAt = "started_at", machine, scenarios
    }

    /// The table: one line per scenario; the server's CPU time per save of each side where the
    /// benchmark could read it (its own cluster's processes, from `/proc`).
    var table: String {
        let header = ["scenario", "ours", "baseline", "ratio", "goal", "met", "p50 ours", "p99 ours",
                      "p50 base", "p99 base", "server µs/op ours", "server µs/op base", "rows", "duration"]
        var lines = [header]
        for result in scenarios {
            let met = result.isMet.map { $0 ? "yes" : "NO" } ?? "—"
            lines.append([
                result.scenario, Format.figure(result.ours, unit: result.unit),
                result.baseline.map { Format.figure($0, unit: result.unit) } ?? "—",
                result.ratioText ?? "—", result.goal.text, met,
                Format.milliseconds(result.latencyOurs?.p50), Format.milliseconds(result.latencyOurs?.p99),
                Format.milliseconds(result.latencyBaseline?.p50), Format.milliseconds(result.latencyBaseline?.p99),
                result.extra["server_cpu_us_per_save_ours"].map(Format.number) ?? "—",
                result.extra["server_cpu_us_per_save_baseline"].map(Format.number) ?? "—",
                Format.number(Double(result.rows)), String(format: "%.1f s", result.duration),
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { line in
            zip(line, widths).enumerated().map { index, pair in
                let (text, width) = pair
                let padding = String(repeating: " ", count: width - text.count)
                return index == 0 ? text + padding : padding + text
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// The JSON, keys sorted, indented.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

/// How figures are written in the table.
enum Format {
    static func number(_ value: Double) -> String {
        if value >= 100 || value == value.rounded() {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.maximumFractionDigits = 0
            return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value))
        }
        return String(format: value >= 10 ? "%.1f" : "%.2f", value)
    }

    static func figure(_ value: Double, unit: String) -> String {
        if unit == "ms" { return milliseconds(value) }
        return number(value) + (unit.hasSuffix("/s") ? "/s" : " " + unit)
    }

    static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

    static func milliseconds(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value >= 100 ? String(format: "%.0f ms", value) : String(format: value >= 10 ? "%.1f ms" : "%.2f ms", value)
    }
}

/// Progress lines on standard error, so that standard output holds only the results.
struct ProgressLog: Sendable {
    let started = ContinuousClock.now

    func step(_ message: String) {
        let elapsed = (ContinuousClock.now - started).seconds
        FileHandle.standardError.write(Data((String(format: "[%6.1fs] ", elapsed) + message + "\n").utf8))
    }
}
