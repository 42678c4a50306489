/// A successful save of a record: committed by this call, or replayed from an earlier commit.
public enum RecordSaveResult<Entity: RecordEntity>: Sendable, Hashable {
    /// This call applied the write; the store counted one commit.
    case committed(SavedRecord<Entity>)

    /// The operation had already committed with the identical request; nothing was written.
    case replayed(SavedRecord<Entity>)

    /// The saved record, the same for the commit and every replay of it.
    @inlinable
    public var saved: SavedRecord<Entity> {
        switch self {
        case .committed(let saved), .replayed(let saved): saved
        }
    }

    /// The outcome code: ``SaveOutcome/committed`` or ``SaveOutcome/replayed``.
    @inlinable
    public var outcome: SaveOutcome {
        switch self {
        case .committed: .committed
        case .replayed: .replayed
        }
    }
}
