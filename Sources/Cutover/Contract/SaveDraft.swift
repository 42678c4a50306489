/// One conditional save of a draft, with the identity that makes retrying it safe.
///
/// The pair (``operationScope``, ``operationID``) names the operation: a retry
/// sends the same request with the same pair and gets the original result back,
/// on whichever writer path it arrives. ``expectedRevision`` makes the save
/// conditional: 0 creates the draft, any other value must equal the draft's
/// current revision.
///
/// ```swift
/// let request = SaveDraft(
///     operationScope: "account-42", operationID: "edit-7",
///     draftID: "draft-1", expectedRevision: 3,
///     content: DraftContent(title: "Quarterly plan"))
/// let saved = try await writer.save(request)   // saved.revision == 4
/// ```
public struct SaveDraft: Sendable, Hashable {
    /// The tenant or account an operation ID belongs to; the same ID in another scope is another operation.
    public var operationScope: String

    /// The caller's identity for this save; reuse it, and only it, when retrying.
    public var operationID: String

    /// The draft to create or update.
    public var draftID: String

    /// The revision the caller last read: 0 to create the draft, otherwise its current revision.
    public var expectedRevision: Int64

    /// What the draft should say after the save.
    public var content: DraftContent

    /// Creates a save request.
    public init(
        operationScope: String,
        operationID: String,
        draftID: String,
        expectedRevision: Int64,
        content: DraftContent
    ) {
        self.operationScope = operationScope
        self.operationID = operationID
        self.draftID = draftID
        self.expectedRevision = expectedRevision
        self.content = content
    }
}
