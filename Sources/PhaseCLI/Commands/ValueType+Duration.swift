import CommandLineKit
import Cutover

extension ValueType where Value == Duration {
    /// A duration in Cutover's one grammar (``DurationText``): `500ms`, `2s`, `5m`, `7d` or
    /// `1h30m`, within `range`.
    public static func duration(in range: ClosedRange<Duration>) -> ValueType<Duration> {
        duration(lower: range.lowerBound, upper: range.upperBound)
    }

    /// A duration no shorter than `minimum`.
    public static func duration(atLeast minimum: Duration) -> ValueType<Duration> {
        duration(lower: minimum, upper: nil)
    }

    /// Any duration of zero or more.
    public static var duration: ValueType<Duration> {
        duration(lower: nil, upper: nil)
    }

    private static func duration(lower: Duration?, upper: Duration?) -> ValueType<Duration> {
        bounded(lower: lower, upper: upper, parse: { text in
            Result { () throws(DurationSyntaxError) in try DurationText.parse(text) }
                .mapError { InvalidValue(reason: $0.description) }
        }, format: { DurationText.format($0) })
    }
}
