/// A successful save: committed by this call, or replayed from an earlier commit of the same operation.
public enum SaveResult: Sendable, Hashable {
    /// This call applied the write; the store counted one commit.
    case committed(SavedDraft)

    /// The operation had already committed with the identical request; nothing was written.
    case replayed(SavedDraft)

    /// The saved draft, the same for the commit and every replay of it.
    public var saved: SavedDraft {
        switch self {
        case .committed(let saved), .replayed(let saved): saved
        }
    }

    /// The outcome code: ``SaveOutcome/committed`` or ``SaveOutcome/replayed``.
    public var outcome: SaveOutcome {
        switch self {
        case .committed: .committed
        case .replayed: .replayed
        }
    }
}
