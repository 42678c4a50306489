/// Why the PostgreSQL record store refused a save that the contract's outcomes do not cover.
/// Nothing was committed in any case.
public enum RecordStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The writer's format is not stored at the table's phase (the modern format before
    /// expand, the legacy format after contract); the server's reason names the column.
    case formatNotStored(String)
    /// The plan's entity cannot be saved: it is not registered (`phase init` with the plan),
    /// or its table or revision column does not exist.
    case entityNotUsable(String)
    /// Another transaction held a lock the save needed (a save of the same operation or the
    /// same record still in flight) for longer than the store's lock timeout.
    case lockTimeout
    /// The role the store's session acts for may not write (or, for a read, read) the plan's
    /// table itself; the functions, which run as the control schema's owner, refuse to do it for
    /// that role.
    case notPermitted(String)

    /// One line; the server's reasons name tables and columns, never values.
    public var description: String {
        switch self {
        case .formatNotStored(let reason): "save refused: \(reason)"
        case .notPermitted(let reason): "refused: \(reason)"
        case .entityNotUsable(let reason): "save refused: \(reason)"
        case .lockTimeout:
            "save timed out waiting for another save of the same operation or record; nothing was committed; retry with the same operation ID"
        }
    }
}
