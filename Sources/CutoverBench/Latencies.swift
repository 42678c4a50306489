/// Latencies of many operations, in milliseconds, with their percentiles.
struct Latencies: Sendable {
    /// Every sample, in no particular order.
    private(set) var values: [Double]

    init(milliseconds: [Double] = []) {
        values = milliseconds
    }

    var count: Int { values.count }

    /// Adds another run's samples.
    mutating func append(_ other: Latencies) {
        values += other.values
    }

    /// The nearest-rank percentile (`0.99` for p99); nil without samples.
    func percentile(_ fraction: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// p50 and p99 together, for a report.
    var summary: LatencySummary {
        LatencySummary(p50: percentile(0.5), p99: percentile(0.99), max: values.max(), samples: values.count)
    }
}

/// The percentiles a report shows.
struct LatencySummary: Sendable, Encodable {
    var p50: Double?
    var p99: Double?
    var max: Double?
    var samples: Int
}

extension Duration {
    /// The duration in milliseconds, as a Double.
    var milliseconds: Double { self / .milliseconds(1) }
    /// The duration in seconds, as a Double.
    var seconds: Double { self / .seconds(1) }
}
