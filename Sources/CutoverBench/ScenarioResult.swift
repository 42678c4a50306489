import Foundation

/// One line of the report: a scenario, our figure, its baseline's, and the goal.
struct ScenarioResult: Sendable, Encodable {
    /// The goal a ratio (or, without a baseline, a value) is held to.
    enum Goal: Sendable, Encodable {
        /// ours / baseline ≥ the figure.
        case ratioAtLeast(Double)
        /// ours / baseline < the figure.
        case ratioBelow(Double)
        /// ours < the figure.
        case valueBelow(Double)
        /// Reported only.
        case none

        var text: String {
            switch self {
            case .ratioAtLeast(let ratio): "≥ \(Format.ratio(ratio))"
            case .ratioBelow(let ratio): "< \(Format.ratio(ratio))"
            case .valueBelow(let value): "< \(Format.number(value))"
            case .none: "—"
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }

    /// One round of an alternating comparison.
    struct Round: Sendable, Encodable {
        var ours: Double
        var baseline: Double
        var ratio: Double { baseline > 0 ? ours / baseline : 0 }

        enum CodingKeys: String, CodingKey { case ours, baseline, ratio }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ours, forKey: .ours)
            try container.encode(baseline, forKey: .baseline)
            try container.encode(ratio, forKey: .ratio)
        }
    }

    var scenario: String
    /// What `ours` and `baseline` count: `saves/s`, `rows/s`, `ms`.
    var unit: String
    var ours: Double
    /// What the baseline is (a pgbench script, a statement).
    var baselineName: String?
    var baseline: Double?
    /// The median of the rounds' ratios (each round ran both sides back to back).
    var ratio: Double?
    var goal: Goal
    var latencyOurs: LatencySummary?
    var latencyBaseline: LatencySummary?
    /// Operations or rows measured on our side, over every round.
    var rows: Int
    /// Seconds of timed work on our side, over every round.
    var duration: Double
    var rounds: [Round] = []
    /// Further figures of the scenario, by name.
    var extra: [String: Double] = [:]
    /// The server settings and conditions the figures were taken under.
    var settings: String
    var notes: [String] = []

    /// Whether the goal is met; nil when there is none.
    var isMet: Bool? {
        switch goal {
        case .ratioAtLeast(let needed): ratio.map { $0 >= needed }
        case .ratioBelow(let limit): ratio.map { $0 < limit }
        case .valueBelow(let limit): ours < limit
        case .none: nil
        }
    }

    /// The ratio as the table shows it: two decimals, or as many more as it takes for the text
    /// not to seem to contradict the goal (0.897× against a goal of 0.9× shows as 0.897×, not
    /// 0.90×).
    var ratioText: String? {
        guard let ratio else { return nil }
        let meets: (Double) -> Bool? = { value in
            switch goal {
            case .ratioAtLeast(let needed): value >= needed
            case .ratioBelow(let limit): value < limit
            case .valueBelow, .none: nil
            }
        }
        for digits in 2...6 {
            let scale = pow(10, Double(digits))
            if meets((ratio * scale).rounded() / scale) == meets(ratio) || digits == 6 {
                return String(format: "%.\(digits)f×", ratio)
            }
        }
        return nil
    }

    enum CodingKeys: String, CodingKey {
        case scenario, unit, ours, baselineName = "baseline_name", baseline, ratio, goal, met
        case latencyOurs = "latency_ms_ours", latencyBaseline = "latency_ms_baseline", rows
        case duration = "duration_s", rounds, extra, settings, notes
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(unit, forKey: .unit)
        try container.encode(ours, forKey: .ours)
        try container.encodeIfPresent(baselineName, forKey: .baselineName)
        try container.encodeIfPresent(baseline, forKey: .baseline)
        try container.encodeIfPresent(ratio, forKey: .ratio)
        try container.encode(goal, forKey: .goal)
        try container.encodeIfPresent(isMet, forKey: .met)
        try container.encodeIfPresent(latencyOurs, forKey: .latencyOurs)
        try container.encodeIfPresent(latencyBaseline, forKey: .latencyBaseline)
        try container.encode(rows, forKey: .rows)
        try container.encode(duration, forKey: .duration)
        if !rounds.isEmpty { try container.encode(rounds, forKey: .rounds) }
        if !extra.isEmpty { try container.encode(extra, forKey: .extra) }
        try container.encode(settings, forKey: .settings)
        if !notes.isEmpty { try container.encode(notes, forKey: .notes) }
    }
}

/// The median of a list of figures; 0 for none.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}
