import Cutover
import Testing

/// The stack one contract case runs on: a subject's store behind a lost-response wrapper and a gate,
/// both adapters over that, and a router over both adapters, starting on the legacy path.
struct ContractRig {
    static let scope = "account-1"
    static let draftID = "draft-1"

    let subject: any DraftWritingContractSubject
    let lossy: LostResponseDraftStorage
    let gate: GatedDraftStorage
    let legacy: LegacyDraftAdapter
    let modern: ModernDraftAdapter
    let router: SaveRouter

    init(subject: any DraftWritingContractSubject) {
        self.subject = subject
        lossy = LostResponseDraftStorage(subject.storage)
        gate = GatedDraftStorage(lossy)
        legacy = LegacyDraftAdapter(storage: gate)
        modern = ModernDraftAdapter(storage: gate)
        router = SaveRouter(legacy: legacy, modern: modern, path: .legacy)
    }

    /// A request in the rig's scope for `draft-1` unless told otherwise.
    func request(
        _ operationID: String,
        expected: Int64,
        title: String,
        body: String = "",
        tags: [String] = [],
        draftID: String = ContractRig.draftID,
        scope: String = ContractRig.scope
    ) -> SaveDraft {
        SaveDraft(
            operationScope: scope, operationID: operationID, draftID: draftID, expectedRevision: expected,
            content: DraftContent(title: title, body: body, tags: tags))
    }

    /// Seeds `draft-1` at revision 1 titled "Original", as the legacy application would have left it.
    func seedOriginal() async throws {
        try await seed(Self.draftID, revision: 1, DraftCodecV1().encode(DraftContent(title: "Original")))
    }

    func seed(_ draftID: String, revision: Int64, _ encoded: EncodedDraft) async throws {
        try await subject.seed(StoredDraft(draftID: draftID, revision: revision, encoded: encoded))
    }

    func commits() async throws -> Int {
        try await subject.commitCount()
    }

    /// The draft's revision and content as a new reader sees them, or nil if there is no such draft.
    func read(_ draftID: String = ContractRig.draftID) async throws -> (revision: Int64, content: DraftContent)? {
        guard let stored = try await subject.storedDraft(id: draftID) else { return nil }
        return (stored.revision, try DraftCodecRegistry.standard.decode(stored.encoded, draftID: draftID))
    }

    /// Expects the draft at `revision` with `content`, as a new reader sees it.
    func expectStored(
        _ draftID: String = ContractRig.draftID,
        revision: Int64,
        _ content: DraftContent,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let stored = try #require(try await read(draftID), sourceLocation: sourceLocation)
        #expect(stored.revision == revision, sourceLocation: sourceLocation)
        #expect(stored.content == content, sourceLocation: sourceLocation)
    }

    /// Saves `request` through the router and expects `failure`.
    func expectFailure(
        _ failure: SaveFailure,
        saving request: SaveDraft,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await #expect(throws: failure, sourceLocation: sourceLocation) {
            _ = try await router.save(request)
        }
    }
}
