import CommandLineKit

extension ValueType where Value == Double {
    /// A percentage such as `1%`, `0.5%` or `12.5%`, as a fraction from 0 to 1.
    public static var percentage: ValueType<Double> {
        ValueType(constraint: "between 0% and 100%", parse: { text in
            guard text.hasSuffix("%"), let number = Double(text.dropLast()), number.isFinite, (0...100).contains(number) else {
                return .failure(InvalidValue(reason: "expected a percentage between 0% and 100%, such as 1% or 0.5%"))
            }
            return .success(number / 100)
        }, format: { value in
            let percent = value * 100
            return (percent == percent.rounded() ? String(Int(percent)) : String(percent)) + "%"
        })
    }

    /// A positive ratio such as `2` or `1.5`.
    public static var ratio: ValueType<Double> {
        ValueType(constraint: "above 0", parse: { text in
            guard let number = Double(text), number.isFinite, number > 0, number <= 1_000_000 else {
                return .failure(InvalidValue(reason: "expected a number above 0, such as 2 or 1.5"))
            }
            return .success(number)
        }, format: { value in value == value.rounded() ? String(Int(value)) : String(value) })
    }
}
