/// A record as a store holds it: its key, its revision and its columns of both formats.
public struct StoredRecord: Sendable, Hashable {
    /// The record's key.
    public var key: RecordKey

    /// The record's current revision, 1 or more.
    public var revision: Int64

    /// Every content column written so far, legacy and modern, by name.
    public var columns: [String: RecordColumnValue]

    /// Creates a stored record.
    public init(key: RecordKey, revision: Int64, columns: [String: RecordColumnValue]) {
        self.key = key
        self.revision = revision
        self.columns = columns
    }
}
