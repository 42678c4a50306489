/// A decimal number compared exactly, digit by digit, however many digits it has.
///
/// Reads the decimal spellings PostgreSQL prints for integers, `numeric` and
/// floating-point values: `12`, `-3.50`, `1.5e+20`. `NaN` and `Infinity` are not
/// numbers here. Equal values compare equal whatever their spelling: `1`,
/// `1.0`, `10e-1` and `-0` against `0`.
struct ExactDecimal: Comparable, Sendable {
    /// The most exponent digits read; more would not fit an `Int` safely.
    private static let maximumExponentDigits = 9

    private let isNegative: Bool
    /// Significant digits without leading or trailing zeros; empty for zero.
    private let digits: [UInt8]
    /// Where the leading digit stands: the value is 0.d₁d₂… × 10^`magnitude`.
    private let magnitude: Int

    /// The number `text` spells, or nil when it is not `-?digits(.digits)?([eE][+-]?digits)?`.
    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        let isNegative = bytes.first == UInt8(ascii: "-")
        if isNegative { bytes = bytes.dropFirst() }
        let whole = Self.digitRun(of: &bytes)
        guard !whole.isEmpty else { return nil }
        var fraction: ArraySlice<UInt8> = []
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fraction = Self.digitRun(of: &bytes)
            guard !fraction.isEmpty else { return nil }
        }
        var exponent = 0
        if let marker = bytes.first, marker | 0x20 == UInt8(ascii: "e") {
            bytes = bytes.dropFirst()
            let isExponentNegative = bytes.first == UInt8(ascii: "-")
            if isExponentNegative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            let exponentDigits = Self.digitRun(of: &bytes)
            guard (1...Self.maximumExponentDigits).contains(exponentDigits.count) else { return nil }
            exponent = exponentDigits.reduce(0) { $0 * 10 + Int($1) }
            if isExponentNegative { exponent = -exponent }
        }
        guard bytes.isEmpty else { return nil }

        let all = Array(whole) + Array(fraction)
        guard let first = all.firstIndex(where: { $0 != 0 }) else {
            self.isNegative = false
            self.digits = []
            self.magnitude = 0
            return
        }
        let last = all.lastIndex(where: { $0 != 0 }) ?? first
        self.isNegative = isNegative
        self.digits = Array(all[first...last])
        self.magnitude = whole.count - first + exponent
    }

    static func < (lhs: ExactDecimal, rhs: ExactDecimal) -> Bool {
        if lhs.isNegative != rhs.isNegative { return lhs.isNegative }
        // Both have the same sign: compare magnitudes, reversed for negatives.
        return lhs.isNegative ? rhs.hasSmallerMagnitude(than: lhs) : lhs.hasSmallerMagnitude(than: rhs)
    }

    private func hasSmallerMagnitude(than other: ExactDecimal) -> Bool {
        if digits.isEmpty || other.digits.isEmpty { return digits.isEmpty && !other.digits.isEmpty }
        if magnitude != other.magnitude { return magnitude < other.magnitude }
        return digits.lexicographicallyPrecedes(other.digits)
    }

    /// Consumes the leading decimal digits of `bytes` and returns their values.
    private static func digitRun(of bytes: inout ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let run = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        bytes = bytes.dropFirst(run.count)
        return ArraySlice(run.map { $0 - UInt8(ascii: "0") })
    }
}
