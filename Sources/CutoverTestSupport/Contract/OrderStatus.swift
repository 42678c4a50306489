/// An order's status: text in the legacy `status` column, a smallint in `status_code`.
///
/// The first three are `examples/orders-status-code`'s ('new', 'paid', 'shipped' as 1, 2, 3),
/// so that its sync trigger maps each as the codecs do.
public enum OrderStatus: String, Sendable, Hashable, CaseIterable {
    /// Code 1, stored as 'new'.
    case pending = "new"
    /// Code 2.
    case paid
    /// Code 3.
    case shipped
    /// Code 4.
    case cancelled

    /// The modern `status_code`.
    public var code: Int64 {
        Int64(Self.allCases.firstIndex(of: self)! + 1)
    }

    /// The status of a code, or nil for a code no status has.
    public init?(code: Int64) {
        guard code >= 1, code <= Int64(Self.allCases.count) else { return nil }
        self = Self.allCases[Int(code) - 1]
    }
}
