/// The result of a committed save of a record: its key, the request's content and the new revision.
///
/// A replay answers with an equal value, built from the recorded revision and the identical request.
public struct SavedRecord<Entity: RecordEntity>: Sendable, Hashable {
    /// The record that was saved.
    public var key: RecordKey

    /// The content of the request that committed.
    public var content: Entity.Content

    /// The record's revision after the save: 1 for a new record, then one more per commit.
    public var revision: Int64

    /// Creates a result.
    @inlinable
    public init(key: RecordKey, content: Entity.Content, revision: Int64) {
        self.key = key
        self.content = content
        self.revision = revision
    }
}
