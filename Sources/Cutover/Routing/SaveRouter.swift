/// Sends each draft save to exactly one writer: the one the current path names when the save arrives.
///
/// The drafts form of ``RecordRouter``, over ``DraftRecords``: the writer is chosen before
/// the first suspension point, so a path change affects later operations only and an
/// in-flight save finishes on the writer it started with. There is no fallback: a failure,
/// an unknown outcome included, goes back to the caller, who retries with the same
/// operation ID; both writers share one ledger, so a retry on the other path replays.
///
/// ```swift
/// let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store),
///                         modern: ModernDraftAdapter(storage: store))
/// let saved = try await router.save(request)
/// await router.use(.modern)
/// ```
public final class SaveRouter: ReportingDraftWriting {
    private let records: RecordRouter<DraftRecords>

    /// A router over two writers that starts on `path` until ``use(_:)`` or ``follow(_:)`` changes it.
    public init(legacy: any ReportingDraftWriting, modern: any ReportingDraftWriting, path: SavePath = .legacy) {
        records = RecordRouter(legacy: DraftRecordWriter(drafts: legacy), modern: DraftRecordWriter(drafts: modern), path: path)
    }

    /// A router over two writers that takes each operation's path from `source`.
    public init(
        legacy: any ReportingDraftWriting,
        modern: any ReportingDraftWriting,
        following source: any WriterPathSource
    ) {
        records = RecordRouter(legacy: DraftRecordWriter(drafts: legacy), modern: DraftRecordWriter(drafts: modern),
                               following: source)
    }

    /// The path the next operation will take.
    public var path: SavePath {
        get async { await records.path }
    }

    /// Calls and outcomes per path so far.
    public var counts: SaveRouterCounts {
        get async { await records.counts }
    }

    /// Sends later operations down `path`, and stops following any source.
    public func use(_ path: SavePath) async {
        await records.use(path)
    }

    /// Takes later operations' paths from `source`, replacing any fixed path or earlier source.
    public func follow(_ source: any WriterPathSource) async {
        await records.follow(source)
    }

    /// Saves through the writer of the current path and counts the call and its outcome.
    ///
    /// An error other than ``SaveFailure`` says nothing about whether the save
    /// committed, so it counts as ``SaveOutcome/outcomeUnknown``; it is rethrown unchanged.
    public func saveReportingOutcome(_ request: SaveDraft) async throws -> SaveResult {
        SaveResult(try await records.saveReportingOutcome(request.record))
    }
}
