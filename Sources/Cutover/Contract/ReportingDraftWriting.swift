/// A ``DraftWriting`` that also tells whether a result was committed now or replayed.
///
/// The router needs this to count `committed` and `replayed` apart; consumers
/// that only want the draft call ``DraftWriting/save(_:)``, which this protocol
/// provides.
public protocol ReportingDraftWriting: DraftWriting {
    /// Saves like ``DraftWriting/save(_:)`` and says whether this call committed or replayed.
    func saveReportingOutcome(_ request: SaveDraft) async throws -> SaveResult
}

extension ReportingDraftWriting {
    /// Saves the draft and returns the result, whether committed now or replayed.
    public func save(_ request: SaveDraft) async throws -> SavedDraft {
        try await saveReportingOutcome(request).saved
    }
}
