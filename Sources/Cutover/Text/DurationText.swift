/// The one way Cutover writes and reads durations: `500ms`, `2s`, `5m`, `7d`, `1h30m`.
///
/// A duration is one or more whole numbers each followed by a unit — `d`, `h`, `m`, `s`,
/// `ms` — from largest to smallest, each unit at most once. The command line, `plan.json` and
/// the runner's messages all use it, and ``format(_:smallestUnit:)`` writes what
/// ``parse(_:)`` reads, so they round-trip at millisecond precision.
///
/// ```swift
/// let window = try DurationText.parse("1h30m")     // .seconds(5_400)
/// DurationText.format(.milliseconds(2_500))         // "2s500ms"
/// DurationText.format(.milliseconds(2_500), smallestUnit: .seconds)  // "2s"
/// ```
public enum DurationText {
    /// A unit of the grammar, largest first.
    public enum Unit: Int, Sendable, CaseIterable {
        case days, hours, minutes, seconds, milliseconds

        /// How the unit is written after its number.
        public var symbol: String {
            switch self {
            case .days: "d"
            case .hours: "h"
            case .minutes: "m"
            case .seconds: "s"
            case .milliseconds: "ms"
            }
        }

        /// The unit's length in milliseconds.
        var milliseconds: Int64 {
            switch self {
            case .days: 86_400_000
            case .hours: 3_600_000
            case .minutes: 60_000
            case .seconds: 1_000
            case .milliseconds: 1
            }
        }
    }

    /// The duration `text` stands for.
    public static func parse(_ text: String) throws(DurationSyntaxError) -> Duration {
        var rest = Substring(text)
        var total: Int64 = 0
        var lastUnit: Unit?
        guard !rest.isEmpty else { throw .notADuration }
        while !rest.isEmpty {
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty else { throw .notADuration }
            rest = rest.dropFirst(digits.count)
            let symbol = rest.prefix(while: { $0.isLetter })
            rest = rest.dropFirst(symbol.count)
            guard !symbol.isEmpty else { throw .missingUnit(after: String(digits)) }
            guard let unit = Unit.allCases.first(where: { $0.symbol == symbol }) else {
                throw .unknownUnit(String(symbol))
            }
            guard unit.rawValue > (lastUnit?.rawValue ?? -1) else { throw .unitsOutOfOrder }
            lastUnit = unit
            guard let count = Int64(digits) else { throw .tooLong }
            let (part, overflow) = count.multipliedReportingOverflow(by: unit.milliseconds)
            let (sum, overflowed) = total.addingReportingOverflow(part)
            guard !overflow, !overflowed else { throw .tooLong }
            total = sum
        }
        return .milliseconds(total)
    }

    /// `duration` written the way ``parse(_:)`` reads it, rounded toward zero to
    /// `smallestUnit`: `1h30m`, `2s500ms`, `0s`.
    public static func format(_ duration: Duration, smallestUnit: Unit = .milliseconds) -> String {
        var remaining = milliseconds(in: duration)
        remaining -= remaining % smallestUnit.milliseconds
        guard remaining != 0 else { return "0\(smallestUnit == .milliseconds ? "s" : smallestUnit.symbol)" }
        let sign = remaining < 0 ? "-" : ""
        remaining = remaining.magnitude > Int64.max.magnitude ? Int64.max : abs(remaining)
        var text = sign
        for unit in Unit.allCases where unit.rawValue <= smallestUnit.rawValue && remaining >= unit.milliseconds {
            text += "\(remaining / unit.milliseconds)\(unit.symbol)"
            remaining %= unit.milliseconds
        }
        return text
    }

    /// Whole milliseconds in `duration`, rounded toward zero and clamped to `Int64`.
    public static func milliseconds(in duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        let (sum, overflowed) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowed ? (seconds < 0 ? Int64.min : Int64.max) : sum
    }
}
