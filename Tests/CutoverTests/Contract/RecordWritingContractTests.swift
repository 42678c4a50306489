import Cutover
import CutoverTestSupport
import Testing

@Suite("The record contract suite", .timeLimit(.minutes(3)))
struct RecordWritingContractTests {
    @Test("the in-memory store keeps the contract for drafts", arguments: RecordWritingContract.allCases)
    func draftsKeepTheContract(_ contract: RecordWritingContract) async throws {
        try await contract.verify { InMemoryRecordContractSubject<DraftRecords>() }
    }

    @Test("the in-memory store keeps the contract for orders", arguments: RecordWritingContract.allCases)
    func ordersKeepTheContract(_ contract: RecordWritingContract) async throws {
        try await contract.verify { InMemoryRecordContractSubject<ContractOrders>() }
    }

    @Test("the in-memory store keeps the contract for a composite key", arguments: RecordWritingContract.allCases)
    func compositeKeysKeepTheContract(_ contract: RecordWritingContract) async throws {
        try await contract.verify { InMemoryRecordContractSubject<ContractTenantNotes>() }
    }

    static let plantedDefects: [(MisbehavingRecordStore<DraftRecords>.Defect, RecordWritingContract)] = [
        (.forgetsOperations, .retryAcrossCutoverReplays),
        (.forgetsOperations, .reusedOperationIDConflicts),
        (.forgetsOperations, .concurrentRetriesCommitOnce),
        (.skipsRevisionCheck, .retryAcrossCutoverReplays),
        (.skipsRevisionCheck, .revisionRules),
        (.acceptsOverlongOperationIDs, .invalidRequestsCommitNothing),
        (.dropsColumns, .formatsSurviveBothWriters),
    ]

    @Test("the suite fails a drafts store with a defect", arguments: plantedDefects)
    func catchesDefectsForDrafts(_ defect: MisbehavingRecordStore<DraftRecords>.Defect, _ contract: RecordWritingContract) async {
        await expectCaught(DraftRecords.self, defect, contract)
    }

    @Test("the suite fails an orders store with a defect", arguments: plantedDefects)
    func catchesDefectsForOrders(_ defect: MisbehavingRecordStore<DraftRecords>.Defect, _ contract: RecordWritingContract) async {
        await expectCaught(ContractOrders.self, defect, contract)
    }

    @Test("the suite fails a composite-key store with a defect",
          arguments: plantedDefects + [(.keysByFirstPartOnly, .keysNameDistinctRecords)])
    func catchesDefectsForCompositeKeys(
        _ defect: MisbehavingRecordStore<DraftRecords>.Defect, _ contract: RecordWritingContract
    ) async {
        await expectCaught(ContractTenantNotes.self, defect, contract)
    }

    @Test("every case runs against a fresh subject")
    func everyCaseMakesOneSubject() async throws {
        for contract in RecordWritingContract.allCases {
            var made = 0
            try await contract.verify {
                made += 1
                return InMemoryRecordContractSubject<ContractOrders>()
            }
            #expect(made == 1, "\(contract)")
        }
    }

    private func expectCaught<Entity: RecordContractEntity>(
        _ entity: Entity.Type, _ defect: MisbehavingRecordStore<DraftRecords>.Defect, _ contract: RecordWritingContract
    ) async {
        let planted = MisbehavingRecordStore<Entity>.Defect(rawValue: defect.rawValue)!
        await withKnownIssue("\(defect) must break \(contract) for \(Entity.planName)") {
            try await contract.verify { MisbehavingRecordSubject<Entity>(planted) }
        }
    }
}
