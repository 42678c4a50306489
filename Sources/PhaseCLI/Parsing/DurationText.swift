/// Reads and writes durations as people type them: `500ms`, `2s`, `5m`, `7d`, `1h30m`.
///
/// A duration is one or more whole numbers each followed by a unit — `d`, `h`, `m`, `s`,
/// `ms` — from largest to smallest, each unit at most once. Writing gives the same form, so
/// `format` and `parse` round-trip at millisecond precision.
public enum DurationText {
    private static let units: [(symbol: String, milliseconds: Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]
    private static let unitList = "ms, s, m, h or d"
    private static let example = "expected a duration such as 500ms, 2s, 5m or 7d"

    /// The duration `text` stands for, or why it stands for none.
    public static func parse(_ text: String) -> Result<Duration, InvalidValue> {
        var rest = Substring(text)
        var total: Int64 = 0
        var lastUnit = -1
        guard !rest.isEmpty else { return .failure(InvalidValue(reason: example)) }
        while !rest.isEmpty {
            let digits = rest.prefix(while: \.isASCIIDigit)
            guard !digits.isEmpty else { return .failure(InvalidValue(reason: example)) }
            rest = rest.dropFirst(digits.count)
            let symbol = rest.prefix(while: { $0.isLetter })
            rest = rest.dropFirst(symbol.count)
            guard !symbol.isEmpty else {
                return .failure(InvalidValue(reason: "missing a unit after '\(digits)' (use \(unitList))"))
            }
            guard let unit = units.firstIndex(where: { $0.symbol == symbol }) else {
                return .failure(InvalidValue(reason: "unknown unit '\(symbol)' (use \(unitList))"))
            }
            guard unit > lastUnit else {
                return .failure(InvalidValue(reason: "units must go from largest to smallest, each at most once"))
            }
            lastUnit = unit
            let tooLong = InvalidValue(reason: "must be shorter")
            guard let count = Int64(digits) else { return .failure(tooLong) }
            let (part, overflow) = count.multipliedReportingOverflow(by: units[unit].milliseconds)
            let (sum, overflowed) = total.addingReportingOverflow(part)
            guard !overflow, !overflowed else { return .failure(tooLong) }
            total = sum
        }
        return .success(.milliseconds(total))
    }

    /// `duration` written the way ``parse(_:)`` reads it, to the millisecond: `1h30m`, `0s`.
    public static func format(_ duration: Duration) -> String {
        var remaining = milliseconds(in: duration)
        guard remaining != 0 else { return "0s" }
        let sign = remaining < 0 ? "-" : ""
        remaining = remaining.magnitude > Int64.max.magnitude ? Int64.max : abs(remaining)
        var text = sign
        for unit in units where remaining >= unit.milliseconds {
            text += "\(remaining / unit.milliseconds)\(unit.symbol)"
            remaining %= unit.milliseconds
        }
        return text
    }

    /// Whole milliseconds in `duration`, rounded toward zero and clamped to `Int64`.
    static func milliseconds(in duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        let (sum, overflowed) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowed ? (seconds < 0 ? Int64.min : Int64.max) : sum
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
