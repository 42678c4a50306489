/// The result of a committed save: the draft, what the request wrote, and its new revision.
///
/// ``content`` is the request's content as written. A replay answers with an
/// equal value, built from the recorded revision and the identical request.
/// A save through the legacy writer stores only what v1 holds, the title, and
/// leaves the stored body and tags as they were; ``content`` still repeats the
/// request, so read the draft back to see what a reader sees.
public struct SavedDraft: Sendable, Hashable {
    /// The draft that was saved.
    public var draftID: String

    /// The content of the request that committed.
    public var content: DraftContent

    /// The draft's revision after the save: 1 for a new draft, then one more per commit.
    public var revision: Int64

    /// Creates a result.
    public init(draftID: String, content: DraftContent, revision: Int64) {
        self.draftID = draftID
        self.content = content
        self.revision = revision
    }
}
