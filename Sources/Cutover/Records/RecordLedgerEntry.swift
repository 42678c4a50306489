/// What the ledger recorded for a committed operation on a record: its key, the revision and the path.
public struct RecordLedgerEntry: Sendable, Hashable {
    /// The record the operation saved.
    public var key: RecordKey

    /// The revision the operation committed.
    public var revision: Int64

    /// The writer path that committed it; a replay on the other path does not change it.
    public var path: SavePath

    /// Creates an entry.
    public init(key: RecordKey, revision: Int64, path: SavePath) {
        self.key = key
        self.revision = revision
        self.path = path
    }
}
