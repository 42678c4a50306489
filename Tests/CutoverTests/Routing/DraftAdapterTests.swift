import Cutover
import Testing

@Suite("The writer adapters")
struct DraftAdapterTests {
    private let content = DraftContent(title: "Plan", body: "Body", tags: ["a"])

    private func request(_ operationID: String, expected: Int64 = 0) -> SaveDraft {
        SaveDraft(operationScope: "s", operationID: operationID, draftID: "d", expectedRevision: expected,
                  content: content)
    }

    @Test("the legacy adapter writes v1 on the legacy path")
    func legacyWritesV1() async throws {
        let store = InMemoryDraftStore()
        let saved = try await LegacyDraftAdapter(storage: store).save(request("op-1"))
        #expect(saved == SavedDraft(draftID: "d", content: content, revision: 1))
        #expect(await store.draft(id: "d")?.encoded == DraftCodecV1().encode(content))
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path == .legacy)
    }

    @Test("the modern adapter writes v2 on the modern path")
    func modernWritesV2() async throws {
        let store = InMemoryDraftStore()
        _ = try await ModernDraftAdapter(storage: store).save(request("op-1"))
        #expect(await store.draft(id: "d")?.encoded == DraftCodecV2().encode(content))
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path == .modern)
    }

    @Test("call counts include calls that fail")
    func callsCountFailures() async throws {
        let store = InMemoryDraftStore()
        let adapter = ModernDraftAdapter(storage: store)
        _ = try await adapter.save(request("op-1"))
        await #expect(throws: SaveFailure.notFound) {
            try await adapter.save(SaveDraft(operationScope: "s", operationID: "op-2", draftID: "missing",
                                             expectedRevision: 1, content: content))
        }
        #expect(adapter.callCount == 2)
    }
}
