/// The drafts API's values as records of ``DraftRecords``, and back: the drafts names are a thin
/// layer over the generic ones.
extension SaveDraft {
    /// This save as a request for a record of ``DraftRecords``, keyed by the draft ID.
    public var record: SaveRequest<DraftRecords> {
        SaveRequest(operationScope: operationScope, operationID: operationID, key: RecordKey(.text(draftID)),
                    expectedRevision: expectedRevision, content: content)
    }

    /// The draft save that `request` is: its key's one text part is the draft ID.
    init(_ request: SaveRequest<DraftRecords>) {
        self.init(operationScope: request.operationScope, operationID: request.operationID,
                  draftID: request.key.draftID, expectedRevision: request.expectedRevision, content: request.content)
    }
}

extension SavedDraft {
    /// The saved draft that `saved` is.
    init(_ saved: SavedRecord<DraftRecords>) {
        self.init(draftID: saved.key.draftID, content: saved.content, revision: saved.revision)
    }

    /// This result as a saved record of ``DraftRecords``.
    var record: SavedRecord<DraftRecords> {
        SavedRecord(key: RecordKey(.text(draftID)), content: content, revision: revision)
    }
}

extension SaveResult {
    /// The draft result that `result` is.
    init(_ result: RecordSaveResult<DraftRecords>) {
        switch result {
        case .committed(let saved): self = .committed(SavedDraft(saved))
        case .replayed(let saved): self = .replayed(SavedDraft(saved))
        }
    }

    /// This result as a record result of ``DraftRecords``.
    var record: RecordSaveResult<DraftRecords> {
        switch self {
        case .committed(let saved): .committed(saved.record)
        case .replayed(let saved): .replayed(saved.record)
        }
    }
}

extension RecordKey {
    /// A drafts key's draft ID: its one text part, as ``SaveDraft/record`` made it.
    fileprivate var draftID: String {
        guard parts.count == 1, case .text(let id) = parts[0] else { return description }
        return id
    }
}

/// A drafts writer seen as a writer of ``DraftRecords``: the request goes to it as the draft save it is.
struct DraftRecordWriter: RecordWriting {
    typealias Entity = DraftRecords

    let drafts: any ReportingDraftWriting

    func saveReportingOutcome(_ request: SaveRequest<DraftRecords>) async throws -> RecordSaveResult<DraftRecords> {
        try await drafts.saveReportingOutcome(SaveDraft(request)).record
    }
}
