import Cutover
import CutoverTestSupport
import Testing

@Suite("PostgresDraftStore keeps the contract")
struct PostgresContractTests {
    @Test(.timeLimit(.minutes(2)), arguments: DraftWritingContract.allCases)
    func keeps(_ contract: DraftWritingContract) async throws {
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("contract_\(contract.rawValue)")
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }
}
