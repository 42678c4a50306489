/// What the ledger recorded for a committed operation: the result and the path that committed it.
public struct LedgerEntry: Sendable, Hashable {
    /// The draft the operation saved.
    public var draftID: String

    /// The revision the operation committed.
    public var revision: Int64

    /// The writer path that committed it; a replay on the other path does not change it.
    public var path: SavePath

    /// Creates an entry.
    public init(draftID: String, revision: Int64, path: SavePath) {
        self.draftID = draftID
        self.revision = revision
        self.path = path
    }
}
