/// What a draft says: a title, a body and tags.
///
/// The legacy format (v1) carries the title only. A reader of a v1 draft sees
/// ``defaultBody`` and ``defaultTags`` for the fields v1 lacks, and a legacy
/// write keeps whatever body and tags the draft already had.
///
/// ```swift
/// let content = DraftContent(title: "Quarterly plan", body: "Draft 3", tags: ["finance"])
/// ```
public struct DraftContent: Sendable, Hashable {
    /// The body a reader gives a draft whose stored format has none: empty.
    public static let defaultBody = ""

    /// The tags a reader gives a draft whose stored format has none: no tags.
    public static let defaultTags: [String] = []

    /// The draft's title; the one field every format carries.
    public var title: String

    /// The draft's body text; v2 and later formats only.
    public var body: String

    /// The draft's tags, in the order the writer gave them; v2 and later formats only.
    public var tags: [String]

    /// Creates content; body and tags default to what a v1 draft reads as.
    public init(
        title: String,
        body: String = DraftContent.defaultBody,
        tags: [String] = DraftContent.defaultTags
    ) {
        self.title = title
        self.body = body
        self.tags = tags
    }
}
