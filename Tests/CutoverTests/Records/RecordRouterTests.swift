import Cutover
import CutoverTestSupport
import Testing

@Suite("The record router", .timeLimit(.minutes(1)))
struct RecordRouterTests {
    /// A writer that tells when a save reaches it, holds it until released, then passes it on.
    struct GatedWriter: RecordWriting {
        typealias Entity = ContractOrders
        let next: RecordAdapter<InMemoryRecordStore<ContractOrders>>
        let entered: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>

        func saveReportingOutcome(_ request: SaveRequest<ContractOrders>) async throws -> RecordSaveResult<ContractOrders> {
            entered.yield()
            for await _ in release { break }
            return try await next.saveReportingOutcome(request)
        }
    }

    /// A writer whose every save ends with an unknown outcome.
    struct LosingWriter: RecordWriting {
        typealias Entity = ContractOrders
        func saveReportingOutcome(_ request: SaveRequest<ContractOrders>) async throws -> RecordSaveResult<ContractOrders> {
            throw SaveFailure.outcomeUnknown
        }
    }

    func order(_ operationID: String, expecting revision: Int64, _ status: OrderStatus) -> SaveRequest<ContractOrders> {
        SaveRequest(operationScope: "shop-1", operationID: operationID, key: RecordKey(.bigint(1)),
                    expectedRevision: revision, content: status)
    }

    @Test("a failure goes back to the caller, never to the other writer")
    func noFallback() async throws {
        let store = InMemoryRecordStore<ContractOrders>()
        let modern = RecordAdapter(storage: store, path: .modern)
        let router = RecordRouter(legacy: LosingWriter(), modern: modern)
        await #expect(throws: SaveFailure.outcomeUnknown) { try await router.save(order("pay", expecting: 0, .paid)) }
        #expect(modern.callCount == 0)
        #expect(await store.commitCount == 0)
        let counts = await router.counts
        #expect(counts.calls(on: .legacy) == 1)
        #expect(counts.count(of: .outcomeUnknown, on: .legacy) == 1)
        #expect(counts.calls(on: .modern) == 0)
    }

    @Test("a save in flight keeps the path it started on; later saves take the new one")
    func inFlightSaveKeepsItsPath() async throws {
        let store = InMemoryRecordStore<ContractOrders>()
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let gated = GatedWriter(next: RecordAdapter(storage: store, path: .legacy), entered: enteredContinuation, release: release)
        let modern = RecordAdapter(storage: store, path: .modern)
        let switchboard = SettableWriterPath(.legacy)
        let router = RecordRouter(legacy: gated, modern: modern, following: switchboard)

        let inFlight = Task { try await router.saveReportingOutcome(order("create", expecting: 0, .pending)) }
        var arrivals = entered.makeAsyncIterator()
        _ = await arrivals.next()
        switchboard.set(.modern)
        releaseContinuation.yield()
        let first = try await inFlight.value
        #expect(first.outcome == .committed)
        #expect(await store.ledgerEntry(operationScope: "shop-1", operationID: "create")?.path == .legacy)

        let second = try await router.saveReportingOutcome(order("pay", expecting: 1, .paid))
        #expect(second.saved.revision == 2)
        #expect(modern.callCount == 1)
        let stored = try #require(await store.record(RecordKey(.bigint(1))))
        #expect(try ContractOrders.legacy.decode(stored.columns) == .pending)
        #expect(try ContractOrders.modern.decode(stored.columns) == .paid)
        let counts = await router.counts
        #expect(counts.count(of: .committed, on: .legacy) == 1)
        #expect(counts.count(of: .committed, on: .modern) == 1)
    }
}
