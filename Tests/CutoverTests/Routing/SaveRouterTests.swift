import Cutover
import CutoverTestSupport
import Testing

@Suite("The save router", .timeLimit(.minutes(3)))
struct SaveRouterTests {
    /// A store that fails every commit with one error, committing nothing.
    private struct FailingStorage: DraftStorage {
        let error: any Error

        func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) throws -> SaveResult {
            throw error
        }
    }

    private struct ForeignError: Error, Equatable {}

    private let store = InMemoryDraftStore()

    private func request(_ operationID: String, expected: Int64 = 0, draftID: String = "d") -> SaveDraft {
        SaveDraft(operationScope: "s", operationID: operationID, draftID: draftID, expectedRevision: expected,
                  content: DraftContent(title: "Title \(operationID)"))
    }

    @Test("a fixed path sends every save to its writer only")
    func fixedPath() async throws {
        let legacy = LegacyDraftAdapter(storage: store)
        let modern = ModernDraftAdapter(storage: store)
        let router = SaveRouter(legacy: legacy, modern: modern, path: .modern)
        _ = try await router.save(request("op-1"))
        _ = try await router.save(request("op-1"))
        #expect(modern.callCount == 2)
        #expect(legacy.callCount == 0)
        let counts = await router.counts
        #expect(counts.calls(on: .modern) == 2)
        #expect(counts.calls(on: .legacy) == 0)
        #expect(counts.outcomes(on: .modern) == [.committed: 1, .replayed: 1])
    }

    @Test("a router following a source takes each operation's path from it; use and follow switch modes")
    func followsSource() async throws {
        let source = SettableWriterPath(.legacy)
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                following: source)
        #expect(await router.path == .legacy)
        _ = try await router.save(request("op-1", draftID: "d1"))
        source.set(.modern)
        #expect(await router.path == .modern)
        _ = try await router.save(request("op-2", draftID: "d2"))
        await router.use(.legacy)
        source.set(.modern)
        #expect(await router.path == .legacy)
        await router.follow(source)
        #expect(await router.path == .modern)

        let paths = await [store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path,
                           store.ledgerEntry(operationScope: "s", operationID: "op-2")?.path]
        #expect(paths == [.legacy, .modern])
    }

    @Test("a save in flight keeps its writer when the source changes")
    func inFlightKeepsWriter() async throws {
        let gate = GatedDraftStorage(store)
        let source = SettableWriterPath(.modern)
        let legacy = LegacyDraftAdapter(storage: gate)
        let modern = ModernDraftAdapter(storage: gate)
        let router = SaveRouter(legacy: legacy, modern: modern, following: source)
        await gate.holdNextCommit()
        let pending = Task { try await router.save(request("op-1")) }
        #expect(await gate.heldCommitPath() == .modern)
        source.set(.legacy)
        await gate.release()
        _ = try await pending.value
        #expect(await store.ledgerEntry(operationScope: "s", operationID: "op-1")?.path == .modern)
        #expect(await store.draft(id: "d")?.encoded.format == .v2)
        #expect([legacy.callCount, modern.callCount] == [0, 1])
    }

    @Test("no fallback: an unknown outcome goes back to the caller and the other writer is never called")
    func noFallback() async {
        let legacy = LegacyDraftAdapter(storage: FailingStorage(error: SaveFailure.outcomeUnknown))
        let modern = ModernDraftAdapter(storage: store)
        let router = SaveRouter(legacy: legacy, modern: modern)
        await #expect(throws: SaveFailure.outcomeUnknown) { try await router.save(request("op-1")) }
        #expect(modern.callCount == 0)
        #expect(await store.commitCount == 0)
        #expect(await router.counts.outcomes(on: .legacy) == [.outcomeUnknown: 1])
    }

    @Test("failures count under their codes; foreign errors count as outcomeUnknown and pass through unchanged")
    func countsFailures() async {
        for failure in [SaveFailure.conflict(expected: 1, current: 2), .notFound, .invalid(.empty(.title)),
                        .operationConflict, .exhausted] {
            let router = SaveRouter(legacy: LegacyDraftAdapter(storage: FailingStorage(error: failure)),
                                    modern: ModernDraftAdapter(storage: store))
            await #expect(throws: failure) { try await router.save(request("op-1")) }
            #expect(await router.counts.outcomes(on: .legacy) == [failure.outcome: 1])
        }
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store),
                                modern: ModernDraftAdapter(storage: FailingStorage(error: ForeignError())), path: .modern)
        await #expect(throws: ForeignError()) { try await router.save(request("op-1")) }
        #expect(await router.counts.outcomes(on: .modern) == [.outcomeUnknown: 1])
    }

    @Test("under concurrent saves and path flips, each operation reaches exactly one writer")
    func oneWriterPerOperation() async throws {
        let source = SettableWriterPath(.legacy)
        let legacy = LegacyDraftAdapter(storage: store)
        let modern = ModernDraftAdapter(storage: store)
        let router = SaveRouter(legacy: legacy, modern: modern, following: source)
        let operations = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for flip in 0..<operations {
                    source.set(flip.isMultiple(of: 2) ? .modern : .legacy)
                    await Task.yield()
                }
            }
            for index in 0..<operations {
                group.addTask { _ = try await router.save(request("op-\(index)", draftID: "d\(index)")) }
            }
            try await group.waitForAll()
        }
        let counts = await router.counts
        #expect(legacy.callCount + modern.callCount == operations)
        #expect(counts.calls(on: .legacy) == legacy.callCount)
        #expect(counts.calls(on: .modern) == modern.callCount)
        #expect(await store.commitCount == operations)
        for index in 0..<operations {
            let path = await store.ledgerEntry(operationScope: "s", operationID: "op-\(index)")?.path
            let format = await store.draft(id: "d\(index)")?.encoded.format
            #expect(format == (path == .legacy ? .v1 : .v2))
        }
    }
}
