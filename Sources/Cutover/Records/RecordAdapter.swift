import Synchronization

/// One writer path of an entity: encodes a request's content in that path's format and commits it through the shared store.
///
/// ```swift
/// let legacy = RecordAdapter(storage: store, path: .legacy)
/// let modern = RecordAdapter(storage: store, path: .modern)
/// ```
public final class RecordAdapter<Storage: RecordStorage>: RecordWriting {
    /// The entity the store holds.
    public typealias Entity = Storage.Entity

    @usableFromInline let storage: Storage
    @usableFromInline let path: SavePath
    @usableFromInline let calls = Atomic<Int>(0)

    /// The writer of `path` over `storage`, the store both paths share.
    public init(storage: Storage, path: SavePath) {
        self.storage = storage
        self.path = path
    }

    /// How many saves this adapter has received, whatever their outcome.
    public var callCount: Int { calls.load(ordering: .relaxed) }

    /// Encodes the content with this path's codec and commits it on this path.
    @inlinable
    public func saveReportingOutcome(_ request: SaveRequest<Entity>) async throws -> RecordSaveResult<Entity> {
        calls.add(1, ordering: .relaxed)
        return try await storage.commit(request, write: Entity.codec(for: path).encode(request.content), path: path)
    }
}
