import Cutover
import CutoverTestSupport
import Testing

/// A failure of a save of any plan's record speaks of records, never of drafts.
@Suite("Messages for a record of any entity")
struct RecordMessageTests {
    func order(_ operationID: String, expecting revision: Int64, _ status: OrderStatus, id: Int64 = 1) -> SaveRequest<ContractOrders> {
        SaveRequest(operationScope: "shop-1", operationID: operationID, key: RecordKey(.bigint(id)),
                    expectedRevision: revision, content: status)
    }

    /// The failure `request` ends in, through the modern adapter of `store`.
    func failure(of request: SaveRequest<ContractOrders>, in store: InMemoryRecordStore<ContractOrders>) async throws -> SaveFailure {
        do {
            _ = try await RecordAdapter(storage: store, path: .modern).save(request)
        } catch let failure as SaveFailure {
            return failure
        }
        Issue.record("the save of \(request.operationID) committed")
        return .outcomeUnknown
    }

    @Test("an orders record's conflict, absence and exhaustion say record, not draft")
    func ordersFailuresSayRecord() async throws {
        let store = InMemoryRecordStore<ContractOrders>()
        _ = try await RecordAdapter(storage: store, path: .modern).save(order("create", expecting: 0, .pending))
        await store.seed(StoredRecord(key: RecordKey(.bigint(2)), revision: .max, columns: [:]))

        let conflict = try await failure(of: order("stale", expecting: 3, .paid), in: store)
        #expect(conflict == .conflict(expected: 3, current: 1))
        #expect(conflict.description == "revision conflict: expected revision 3, current revision 1; re-read the record")
        let missing = try await failure(of: order("missing", expecting: 1, .paid, id: 99), in: store)
        #expect(missing.description == "record not found: the expected revision is above 0 but the record does not exist")
        let exhausted = try await failure(of: order("full", expecting: .max, .paid, id: 2), in: store)
        #expect(exhausted == .exhausted)
        for failure in [conflict, missing, exhausted] {
            #expect(!failure.description.lowercased().contains("draft"), "\(failure)")
        }
    }
}
