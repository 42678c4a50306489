import Cutover

/// A store under test by ``DraftWritingContract``: its commit boundary and what the suite needs to observe it.
///
/// A fresh subject holds no drafts and no ledger entries. The suite builds the
/// adapters and the router over ``storage`` itself, so a subject only exposes
/// the store.
///
/// ```swift
/// struct PostgresSubject: DraftWritingContractSubject {
///     let store: PostgresDraftStore
///     var storage: any DraftStorage { store }
///     func commitCount() async throws -> Int { try await store.countLedgerRows() }
///     func seed(_ draft: StoredDraft) async throws { try await store.insertForTest(draft) }
///     func storedDraft(id draftID: String) async throws -> StoredDraft? { try await store.read(draftID) }
/// }
/// ```
public protocol DraftWritingContractSubject: Sendable {
    /// The commit boundary under test; every save of the suite goes through it.
    var storage: any DraftStorage { get }

    /// How many saves the store has committed since the subject was made.
    func commitCount() async throws -> Int

    /// Places a draft as an earlier writer left it, at any revision up to `Int64.max`, without a commit.
    func seed(_ draft: StoredDraft) async throws

    /// The draft as stored now, or nil. The suite decodes it with
    /// ``DraftCodecRegistry/standard`` and compares content, never bytes, so a
    /// store may return an equivalent v2 document in its own spacing.
    func storedDraft(id draftID: String) async throws -> StoredDraft?

    /// Whether `error` is the store's definite answer that a save committed nothing and may be
    /// sent again with the same operation ID: a wait for a lock or a connection that ran out
    /// under load. The suite sends such saves again, as a caller would, and judges the answer
    /// they come to; every other failure is judged as it is.
    func committedNothing(_ error: any Error) -> Bool
}

extension DraftWritingContractSubject {
    /// A store that never gives up waiting answers every save definitely.
    public func committedNothing(_ error: any Error) -> Bool { false }
}
