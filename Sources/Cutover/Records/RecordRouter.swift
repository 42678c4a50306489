/// Sends each save of an entity to exactly one writer: the one the current path names when the save arrives.
///
/// The generic form of ``SaveRouter``: the writer is chosen before the first suspension
/// point, a path change affects later operations only, and there is no fallback; a
/// failure goes back to the caller, who retries with the same operation ID. It counts
/// calls and outcomes per path, never payloads.
///
/// ```swift
/// let router = RecordRouter(legacy: RecordAdapter(storage: store, path: .legacy),
///                           modern: RecordAdapter(storage: store, path: .modern))
/// let saved = try await router.save(request)
/// ```
public actor RecordRouter<Entity: RecordEntity>: RecordWriting {
    private let legacy: any RecordWriting<Entity>
    private let modern: any RecordWriting<Entity>
    private var selection: WriterSelection

    /// A router over two writers that starts on `path` until ``use(_:)`` or ``follow(_:)`` changes it.
    public init(legacy: any RecordWriting<Entity>, modern: any RecordWriting<Entity>, path: SavePath = .legacy) {
        self.legacy = legacy
        self.modern = modern
        selection = WriterSelection(path)
    }

    /// A router over two writers that takes each operation's path from `source`.
    public init(legacy: any RecordWriting<Entity>, modern: any RecordWriting<Entity>, following source: any WriterPathSource) {
        self.legacy = legacy
        self.modern = modern
        selection = WriterSelection(following: source)
    }

    /// The path the next operation will take.
    public var path: SavePath { selection.path }

    /// Calls and outcomes per path so far.
    public var counts: SaveRouterCounts { selection.counts }

    /// Sends later operations down `path`, and stops following any source.
    public func use(_ path: SavePath) {
        selection.use(path)
    }

    /// Takes later operations' paths from `source`.
    public func follow(_ source: any WriterPathSource) {
        selection.follow(source)
    }

    /// Saves through the writer of the current path and counts the call and its outcome.
    ///
    /// An error other than ``SaveFailure`` counts as ``SaveOutcome/outcomeUnknown`` and is rethrown unchanged.
    public func saveReportingOutcome(_ request: SaveRequest<Entity>) async throws -> RecordSaveResult<Entity> {
        // No suspension before the writer call: the path read here is the path this operation keeps.
        let chosen = selection.choose()
        let writer = chosen == .legacy ? legacy : modern
        do {
            let result = try await writer.saveReportingOutcome(request)
            selection.record(.success(result.outcome), on: chosen)
            return result
        } catch {
            selection.record(.failure(error), on: chosen)
            throw error
        }
    }
}
