import Synchronization

/// A writer path: encodes each request's content with its format's encoder and commits it through the shared store.
///
/// Use it as ``LegacyDraftAdapter`` (v1 on the legacy path) or
/// ``ModernDraftAdapter`` (v2 on the modern path); those initialisers are the
/// only way to make one, so a format is never paired with the wrong path.
public final class DraftAdapter<Encoder: DraftEncoder>: ReportingDraftWriting {
    private let storage: any DraftStorage
    private let encoder: Encoder
    private let path: SavePath
    private let calls = Atomic<Int>(0)

    init(storage: any DraftStorage, encoder: Encoder, path: SavePath) {
        self.storage = storage
        self.encoder = encoder
        self.path = path
    }

    /// How many saves this adapter has received, whatever their outcome.
    public var callCount: Int { calls.load(ordering: .relaxed) }

    /// Encodes the request's content in this path's format and commits it on this path.
    public func saveReportingOutcome(_ request: SaveDraft) async throws -> SaveResult {
        calls.add(1, ordering: .relaxed)
        return try await storage.commit(request, write: encoder.encode(request.content), path: path)
    }
}
