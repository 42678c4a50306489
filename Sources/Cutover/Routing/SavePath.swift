/// The two writer paths of a cutover: the legacy writer (v1) and the modern writer (v2).
///
/// The raw values are stable codes, recorded in the ledger and in metrics.
public enum SavePath: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The legacy writer: stores v1, the title only.
    case legacy
    /// The modern writer: stores v2, the whole content.
    case modern

    /// The path's code, identical to the raw value.
    public var description: String { rawValue }
}
