/// Why a row could not be read through a format's codec; names the column, never its value.
public enum RecordDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The format's column is absent or NULL.
    case missingColumn(String)
    /// The column holds a value the format does not define.
    case unexpectedValue(column: String)

    /// One line naming the column.
    public var description: String {
        switch self {
        case .missingColumn(let column): "column \(column) is missing or NULL"
        case .unexpectedValue(let column): "column \(column) holds a value this format does not define"
        }
    }
}
