import Cutover
import CutoverTestSupport
import Testing

@Suite("PostgresDraftStore keeps the contract")
struct PostgresContractTests {
    /// On a table expanded by either drafts plan: the built-in declarative one and the format-1
    /// plan of SQL files it replaced, whose triggers differ but must keep the same contract.
    @Test(.timeLimit(.minutes(3)), arguments: DraftWritingContract.allCases, DraftsPlan.allCases)
    func keeps(_ contract: DraftWritingContract, plan: DraftsPlan) async throws {
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("contract_\(contract.rawValue)", plan: plan)
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }

    /// 100 racing saves over one connection that callers wait a millisecond for: most give up
    /// waiting, committing nothing, and sent again each comes to the answer it would have met
    /// (a conflict, or for a retry of one operation a replay). Still exactly one commit.
    @Test(.timeLimit(.minutes(3)), arguments: [DraftWritingContract.concurrentSavesCommitOnce, .concurrentRetriesCommitOnce])
    func savesThatTimedOutWaitingCommitNothingAndTheirRetriesComeToTheirAnswer(_ contract: DraftWritingContract) async throws {
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("contract_pool_timeout_\(contract.rawValue)", poolSize: 1,
                                                        acquireTimeout: .milliseconds(1))
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }
}
