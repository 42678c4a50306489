/// Inclusive lower and upper limits on a value, and the words that state them.
///
/// One piece serves integers and durations, so their help text and their errors agree:
/// help says `between 1 and 100000` and an error says `must be between 1 and 100000`.
struct ValueBounds<Value: Comparable & Sendable>: Sendable {
    var lower: Value?
    var upper: Value?

    static var unbounded: ValueBounds { ValueBounds(lower: nil, upper: nil) }

    /// The limits in words, or nil when there are none.
    func phrase(_ format: (Value) -> String) -> String? {
        switch (lower, upper) {
        case let (lower?, upper?): "between \(format(lower)) and \(format(upper))"
        case let (lower?, nil): "at least \(format(lower))"
        case let (nil, upper?): "at most \(format(upper))"
        case (nil, nil): nil
        }
    }

    /// `value` if it lies within the limits, or why not.
    func check(_ value: Value, _ format: (Value) -> String) -> Result<Value, InvalidValue> {
        if let lower, value < lower { return .failure(outside(format)) }
        if let upper, value > upper { return .failure(outside(format)) }
        return .success(value)
    }

    private func outside(_ format: (Value) -> String) -> InvalidValue {
        InvalidValue(reason: "must be " + (phrase(format) ?? "within range"))
    }
}
