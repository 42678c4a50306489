import Cutover
import Testing

/// The behaviour every store behind ``DraftStorage`` must show, one case per scenario.
///
/// Each case builds a fresh subject, puts both adapters and a router over
/// its store, and checks the outcome, the commit count and what is stored.
/// A store's tests run every case unchanged:
///
/// ```swift
/// @Test(arguments: DraftWritingContract.allCases)
/// func keepsTheContract(_ contract: DraftWritingContract) async throws {
///     try await contract.verify { InMemoryContractSubject() }
/// }
/// ```
public enum DraftWritingContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The seed's verification: a retry across the cutover replays, and a stale revision still conflicts.
    case retryAcrossCutoverReplays
    /// The seed's exercise: an in-flight save keeps its path; a lost response's retry commits once.
    case inFlightSaveKeepsItsPath
    /// The same operation ID with another request is operationConflict and commits nothing.
    case reusedOperationIDConflicts
    /// The same operation ID in another scope is another operation.
    case operationIDsAreScoped
    /// 100 concurrent saves at one revision: exactly one commits, 99 conflict.
    case concurrentSavesCommitOnce
    /// 100 concurrent retries of one operation: one commit, one result for all.
    case concurrentRetriesCommitOnce
    /// Revision rules: 0 creates, conflict, notFound; failures leave the operation ID free.
    case revisionRules
    /// A draft at revision Int64.max is exhausted on both paths.
    case exhaustedAtMaximumRevision
    /// Every invalid input of the table is rejected with its violation and leaves nothing behind.
    case invalidRequestsCommitNothing
    /// A legacy write onto a v2 draft keeps body and tags; a new reader reads a legacy draft with defaults.
    case formatsSurviveBothWriters

    /// The case's name, for test output.
    public var testDescription: String { rawValue }

    /// Runs this case against a subject made by `makeSubject`, recording failed expectations as test issues.
    public func verify(makeSubject: () async throws -> any DraftWritingContractSubject) async throws {
        let rig = ContractRig(subject: try await makeSubject())
        switch self {
        case .retryAcrossCutoverReplays: try await rig.verifyRetryAcrossCutover()
        case .inFlightSaveKeepsItsPath: try await rig.verifyInFlightSaveKeepsItsPath()
        case .reusedOperationIDConflicts: try await rig.verifyReusedOperationIDConflicts()
        case .operationIDsAreScoped: try await rig.verifyOperationIDsAreScoped()
        case .concurrentSavesCommitOnce: try await rig.verifyConcurrentSavesCommitOnce()
        case .concurrentRetriesCommitOnce: try await rig.verifyConcurrentRetriesCommitOnce()
        case .revisionRules: try await rig.verifyRevisionRules()
        case .exhaustedAtMaximumRevision: try await rig.verifyExhaustedAtMaximumRevision()
        case .invalidRequestsCommitNothing: try await rig.verifyInvalidRequestsCommitNothing()
        case .formatsSurviveBothWriters: try await rig.verifyFormatsSurviveBothWriters()
        }
    }
}
