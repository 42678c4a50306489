/// Anything that performs a conditional save with retry identity: the consumer contract.
///
/// Conformers throw ``SaveFailure`` for every outcome that is not a commit or a
/// replay. Callers retry ``SaveFailure/outcomeUnknown`` with the same request.
///
/// ```swift
/// do {
///     let saved = try await writer.save(request)
/// } catch SaveFailure.conflict(let expected, let current) {
///     // re-read the draft, then save again with a new operation ID
/// }
/// ```
public protocol DraftWriting: Sendable {
    /// Saves the draft if its revision is the expected one, once per operation.
    func save(_ request: SaveDraft) async throws -> SavedDraft
}
