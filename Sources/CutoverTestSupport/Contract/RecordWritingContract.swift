import Cutover
import Testing

/// The behaviour every ``RecordStorage`` must show for any entity, one case per scenario.
///
/// ```swift
/// @Test(arguments: RecordWritingContract.allCases)
/// func keepsTheContract(_ contract: RecordWritingContract) async throws {
///     try await contract.verify { InMemoryRecordContractSubject<ContractOrders>() }
/// }
/// ```
public enum RecordWritingContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A retry across the cutover replays, and a stale revision still conflicts.
    case retryAcrossCutoverReplays
    /// The same operation ID with another request is operationConflict and commits nothing.
    case reusedOperationIDConflicts
    /// The same operation ID in another scope is another operation.
    case operationIDsAreScoped
    /// Two keys, composite ones differing in one part only, are two records.
    case keysNameDistinctRecords
    /// 32 concurrent saves at one revision: exactly one commits, the rest conflict.
    case concurrentSavesCommitOnce
    /// 32 concurrent retries of one operation over both paths: one commit, one result for all.
    case concurrentRetriesCommitOnce
    /// 0 creates, conflict names the current revision, notFound; failures leave the operation ID free.
    case revisionRules
    /// A record at revision Int64.max is exhausted on both paths.
    case exhaustedAtMaximumRevision
    /// Invalid requests are rejected with their violation and leave nothing behind.
    case invalidRequestsCommitNothing
    /// Each format reads back what it wrote, and a write in one format leaves the other's columns.
    case formatsSurviveBothWriters

    /// The case's name, for test output.
    public var testDescription: String { rawValue }

    /// Runs this case against a subject made by `makeSubject`, recording failed expectations as test issues.
    public func verify<Subject: RecordWritingContractSubject>(makeSubject: () async throws -> Subject) async throws {
        let rig = RecordContractRig(subject: try await makeSubject())
        switch self {
        case .retryAcrossCutoverReplays: try await rig.verifyRetryAcrossCutover()
        case .reusedOperationIDConflicts: try await rig.verifyReusedOperationIDConflicts()
        case .operationIDsAreScoped: try await rig.verifyOperationIDsAreScoped()
        case .keysNameDistinctRecords: try await rig.verifyKeysNameDistinctRecords()
        case .concurrentSavesCommitOnce: try await rig.verifyConcurrentSavesCommitOnce()
        case .concurrentRetriesCommitOnce: try await rig.verifyConcurrentRetriesCommitOnce()
        case .revisionRules: try await rig.verifyRevisionRules()
        case .exhaustedAtMaximumRevision: try await rig.verifyExhaustedAtMaximumRevision()
        case .invalidRequestsCommitNothing: try await rig.verifyInvalidRequestsCommitNothing()
        case .formatsSurviveBothWriters: try await rig.verifyFormatsSurviveBothWriters()
        }
    }
}
