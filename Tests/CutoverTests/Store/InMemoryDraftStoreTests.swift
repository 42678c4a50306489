import Cutover
import Testing

@Suite("The in-memory reference store")
struct InMemoryDraftStoreTests {
    private let store = InMemoryDraftStore()
    private let content = DraftContent(title: "Plan", body: "Body", tags: ["a"])

    private func request(_ operationID: String, expected: Int64, title: String = "Plan", draftID: String = "d",
                         scope: String = "s") -> SaveDraft {
        SaveDraft(operationScope: scope, operationID: operationID, draftID: draftID, expectedRevision: expected,
                  content: DraftContent(title: title, body: "Body", tags: ["a"]))
    }

    private func commit(_ request: SaveDraft, on path: SavePath) async throws -> SaveResult {
        let encoder: any DraftEncoder = path == .legacy ? DraftCodecV1() : DraftCodecV2()
        return try await store.commit(request, write: encoder.encode(request.content), path: path)
    }

    @Test("a commit stores the write, records the operation and counts once")
    func commitRecordsEverything() async throws {
        let create = request("op-1", expected: 0)
        #expect(try await commit(create, on: .modern) == .committed(SavedDraft(draftID: "d", content: content, revision: 1)))
        #expect(await store.draft(id: "d") == StoredDraft(draftID: "d", revision: 1, encoded: DraftCodecV2().encode(content)))
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")
            == LedgerEntry(draftID: "d", revision: 1, path: .modern))
        #expect(await store.commitCount == 1)
    }

    @Test("a replay answers from the ledger after the draft has moved on, and keeps the committing path")
    func replayAfterLaterCommits() async throws {
        let first = request("op-1", expected: 0, title: "First")
        let saved = try await commit(first, on: .legacy).saved
        _ = try await commit(request("op-2", expected: 1, title: "Second"), on: .legacy)

        #expect(try await commit(first, on: .modern) == .replayed(saved))
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path == .legacy)
        #expect(await store.commitCount == 2)
        #expect(await store.draft(id: "d")?.revision == 2)
    }

    @Test("the ledger is consulted before the revision")
    func ledgerBeforeRevision() async throws {
        _ = try await commit(request("op-1", expected: 0), on: .modern)
        await #expect(throws: SaveFailure.operationConflict) {
            try await commit(request("op-1", expected: 7, title: "Other"), on: .modern)
        }
    }

    @Test("operation and draft identities compare by exact bytes, as PostgreSQL's text does")
    func identitiesCompareByBytes() async throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        #expect(try await commit(request(composed, expected: 0, draftID: composed), on: .modern).outcome == .committed)
        #expect(try await commit(request(decomposed, expected: 0, draftID: decomposed), on: .modern).outcome == .committed)
        #expect(await store.commitCount == 2)
        #expect(await store.draft(id: composed)?.draftID.utf8.elementsEqual(composed.utf8) == true)
        #expect(await store.draft(id: decomposed)?.draftID.utf8.elementsEqual(decomposed.utf8) == true)
    }

    @Test("a write the store cannot place leaves no draft change, no ledger entry and no commit")
    func unplaceableWriteLeavesNothing() async throws {
        let future = StoredDraft(draftID: "d", revision: 1, encoded: EncodedDraft(
            format: DraftFormat(rawValue: "v3"), bytes: Array("{}".utf8)))
        await store.seed(future)
        await #expect(throws: DraftDecodingError.unsupportedFormat(future.encoded.format, draftID: "d", supported: [.v1, .v2])) {
            try await commit(request("op-1", expected: 1), on: .legacy)
        }
        #expect(await store.draft(id: "d") == future)
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1") == nil)
        #expect(await store.commitCount == 0)
    }

    @Test("used directly as a writer, the store saves as the modern path")
    func directUseIsModern() async throws {
        let create = request("op-1", expected: 0)
        #expect(try await store.saveReportingOutcome(create).outcome == .committed)
        #expect(try await store.saveReportingOutcome(create).outcome == .replayed)
        #expect(try await store.save(create).revision == 1)
        #expect(await store.draft(id: "d")?.encoded == DraftCodecV2().encode(content))
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path == .modern)
        #expect(await store.commitCount == 1)
    }

    @Test("seeding places a draft without a commit")
    func seedingDoesNotCommit() async throws {
        await store.seed(StoredDraft(draftID: "d", revision: 41, encoded: DraftCodecV1().encode(content)))
        #expect(await store.commitCount == 0)
        #expect(try await commit(request("op-1", expected: 41), on: .modern).saved.revision == 42)
    }
}
