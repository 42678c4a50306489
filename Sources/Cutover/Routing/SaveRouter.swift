/// Sends each save to exactly one writer: the one the current path names when the save arrives.
///
/// The writer is chosen before the first suspension point, so a path change
/// affects later operations only and an in-flight save finishes on the writer
/// it started with. There is no fallback: a failure, an unknown outcome
/// included, goes back to the caller, who retries with the same operation ID;
/// both writers share one ledger, so a retry on the other path replays.
///
/// ```swift
/// let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store),
///                         modern: ModernDraftAdapter(storage: store))
/// let saved = try await router.save(request)
/// await router.use(.modern)
/// ```
public actor SaveRouter: ReportingDraftWriting {
    private let legacy: any ReportingDraftWriting
    private let modern: any ReportingDraftWriting
    private var selection: WriterSelection

    /// A router over two writers that starts on `path` until ``use(_:)`` or ``follow(_:)`` changes it.
    public init(legacy: any ReportingDraftWriting, modern: any ReportingDraftWriting, path: SavePath = .legacy) {
        self.legacy = legacy
        self.modern = modern
        selection = WriterSelection(path)
    }

    /// A router over two writers that takes each operation's path from `source`.
    public init(
        legacy: any ReportingDraftWriting,
        modern: any ReportingDraftWriting,
        following source: any WriterPathSource
    ) {
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

    /// Takes later operations' paths from `source`, replacing any fixed path or earlier source.
    public func follow(_ source: any WriterPathSource) {
        selection.follow(source)
    }

    /// Saves through the writer of the current path and counts the call and its outcome.
    ///
    /// An error other than ``SaveFailure`` says nothing about whether the save
    /// committed, so it counts as ``SaveOutcome/outcomeUnknown``; it is rethrown unchanged.
    public func saveReportingOutcome(_ request: SaveDraft) async throws -> SaveResult {
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
