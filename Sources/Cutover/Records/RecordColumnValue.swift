/// One column's value as a format's codec writes it and reads it back.
public enum RecordColumnValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A text value.
    case text(String)
    /// An integer value (smallint, integer or bigint).
    case integer(Int64)
    /// A boolean value.
    case boolean(Bool)
}
