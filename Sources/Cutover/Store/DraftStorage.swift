/// The one authoritative commit boundary that both writer paths write through.
///
/// A conformer does, atomically and in this order: validate the request
/// (``SaveDraft/validate()``); claim (scope, operation ID) in its ledger,
/// replaying the recorded result for an identical request (by
/// ``SaveDraft/canonicalEncoding``) and throwing
/// ``SaveFailure/operationConflict`` for a different one; check the revision
/// (``SaveDraft/committedRevision(over:)``); then store `write` as
/// ``EncodedDraft/stored(afterWriting:over:draftID:)`` says, record the
/// ledger entry with `path`, and count one commit. A failure at any step
/// leaves nothing behind, the ledger claim included.
///
/// A conformer that also declares ``ReportingDraftWriting`` is usable directly
/// as a writer: it saves as the modern path does.
public protocol DraftStorage: Sendable {
    /// Commits `write` for `request` once per operation, or replays the operation's result.
    ///
    /// - Parameters:
    ///   - request: The save; its content is what ``SavedDraft/content`` repeats.
    ///   - write: The request's content encoded by the writer's format; what is stored.
    ///   - path: The writer path the save came through, recorded in the ledger and
    ///     never part of the fingerprint.
    func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult
}

extension ReportingDraftWriting where Self: DraftStorage {
    /// Saves as the modern writer does: encodes with ``DraftCodecV2`` and commits on ``SavePath/modern``.
    public func saveReportingOutcome(_ request: SaveDraft) async throws -> SaveResult {
        try await commit(request, write: DraftCodecV2().encode(request.content), path: .modern)
    }
}
