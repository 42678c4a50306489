import Cutover

/// A ``DraftStorage`` wrapper that can lose one response: the commit happens, the caller hears outcomeUnknown.
///
/// It simulates a connection lost around COMMIT, which the in-memory store
/// cannot suffer, so that retry-after-unknown can be tested against any store.
///
/// ```swift
/// await lossy.loseNextResponse()
/// // the next save commits and throws SaveFailure.outcomeUnknown;
/// // its retry with the same operation ID replays
/// ```
public actor LostResponseDraftStorage: DraftStorage {
    private let inner: any DraftStorage
    private var losesNextResponse = false

    /// A wrapper around `inner` that passes every response through until told otherwise.
    public init(_ inner: any DraftStorage) {
        self.inner = inner
    }

    /// Makes the next commit that succeeds throw ``SaveFailure/outcomeUnknown`` after committing.
    public func loseNextResponse() {
        losesNextResponse = true
    }

    /// Forwards the commit; throws outcomeUnknown instead of the result when a loss is due.
    public func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult {
        let result = try await inner.commit(request, write: write, path: path)
        if losesNextResponse {
            losesNextResponse = false
            throw SaveFailure.outcomeUnknown
        }
        return result
    }
}
