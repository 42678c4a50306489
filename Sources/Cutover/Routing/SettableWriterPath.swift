import Synchronization

/// A ``WriterPathSource`` that holds a path in memory and changes it when told.
///
/// ```swift
/// let switchboard = SettableWriterPath(.legacy)
/// let router = SaveRouter(legacy: legacy, modern: modern, following: switchboard)
/// switchboard.set(.modern)   // later operations go to the modern writer
/// ```
public final class SettableWriterPath: WriterPathSource {
    private let path: Mutex<SavePath>

    /// A source that starts at `initial`.
    public init(_ initial: SavePath) {
        path = Mutex(initial)
    }

    /// The path new operations should take now.
    public func currentPath() -> SavePath {
        path.withLock { $0 }
    }

    /// Changes the path for every operation that starts after this call.
    public func set(_ newPath: SavePath) {
        path.withLock { $0 = newPath }
    }
}
