import Cutover
import CutoverTestSupport

/// A contract subject whose store has one deliberate defect, to show that the contract suite notices it.
struct MisbehavingSubject: DraftWritingContractSubject {
    enum Defect: String, Sendable, CaseIterable {
        /// Records no ledger claims: every retry is treated as a new operation.
        case forgetsOperations
        /// Saves over whatever revision is current.
        case skipsRevisionCheck
        /// Turns legacy writes into modern ones that keep only the title.
        case dropsModernFields
        /// Cuts overlong operation IDs down instead of refusing them.
        case acceptsOverlongOperationIDs
    }

    private actor Storage: DraftStorage {
        let store = InMemoryDraftStore()
        let defect: Defect
        private var serial = 0

        init(defect: Defect) {
            self.defect = defect
        }

        func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult {
            var request = request
            var write = write
            switch defect {
            case .forgetsOperations:
                serial += 1
                request.operationID = "forgotten-\(serial)"
            case .skipsRevisionCheck:
                request.expectedRevision = await store.draft(id: request.draftID)?.revision ?? 0
            case .dropsModernFields where write.format == .v1:
                write = DraftCodecV2().encode(try DraftCodecV1().decode(write.bytes))
            case .acceptsOverlongOperationIDs:
                request.operationID = String(request.operationID.unicodeScalars.prefix(255))
            case .dropsModernFields:
                break
            }
            return try await store.commit(request, write: write, path: path)
        }
    }

    private let misbehaving: Storage

    init(_ defect: Defect) {
        misbehaving = Storage(defect: defect)
    }

    var storage: any DraftStorage { misbehaving }

    func commitCount() async -> Int {
        await misbehaving.store.commitCount
    }

    func seed(_ draft: StoredDraft) async {
        await misbehaving.store.seed(draft)
    }

    func storedDraft(id draftID: String) async -> StoredDraft? {
        await misbehaving.store.draft(id: draftID)
    }
}
