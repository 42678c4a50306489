import Cutover
import CutoverTestSupport
import Testing

@Suite("The contract suite", .timeLimit(.minutes(3)))
struct DraftWritingContractTests {
    @Test("the in-memory store keeps the contract", arguments: DraftWritingContract.allCases)
    func inMemoryStoreKeepsTheContract(_ contract: DraftWritingContract) async throws {
        try await contract.verify { InMemoryContractSubject() }
    }

    @Test("the suite fails a store with a defect", arguments: [
        (MisbehavingSubject.Defect.forgetsOperations, DraftWritingContract.retryAcrossCutoverReplays),
        (.forgetsOperations, .inFlightSaveKeepsItsPath),
        (.forgetsOperations, .reusedOperationIDConflicts),
        (.forgetsOperations, .concurrentRetriesCommitOnce),
        (.skipsRevisionCheck, .retryAcrossCutoverReplays),
        (.skipsRevisionCheck, .concurrentSavesCommitOnce),
        (.skipsRevisionCheck, .revisionRules),
        (.dropsModernFields, .formatsSurviveBothWriters),
        (.acceptsOverlongOperationIDs, .invalidRequestsCommitNothing),
    ])
    func suiteCatchesDefect(_ defect: MisbehavingSubject.Defect, _ contract: DraftWritingContract) async {
        await withKnownIssue("\(defect) must break \(contract)") {
            try await contract.verify { MisbehavingSubject(defect) }
        }
    }

    @Test("every case runs against a fresh subject")
    func everyCaseMakesOneSubject() async throws {
        for contract in DraftWritingContract.allCases {
            var made = 0
            try await contract.verify {
                made += 1
                return InMemoryContractSubject()
            }
            #expect(made == 1, "\(contract)")
        }
    }
}
