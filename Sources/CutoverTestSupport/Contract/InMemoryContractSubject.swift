import Cutover

/// ``InMemoryDraftStore`` as a ``DraftWritingContractSubject``: the reference every other store is held to.
public struct InMemoryContractSubject: DraftWritingContractSubject {
    /// The store under test, empty when the subject is made.
    public let store = InMemoryDraftStore()

    /// A subject over a new, empty store.
    public init() {}

    /// The store itself.
    public var storage: any DraftStorage { store }

    /// The store's commit count.
    public func commitCount() async -> Int {
        await store.commitCount
    }

    /// Seeds the store directly.
    public func seed(_ draft: StoredDraft) async {
        await store.seed(draft)
    }

    /// The store's current draft.
    public func storedDraft(id draftID: String) async -> StoredDraft? {
        await store.draft(id: draftID)
    }
}
