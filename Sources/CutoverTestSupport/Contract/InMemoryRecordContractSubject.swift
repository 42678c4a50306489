import Cutover

/// ``InMemoryRecordStore`` as a ``RecordWritingContractSubject``: the reference for every entity.
public struct InMemoryRecordContractSubject<Entity: RecordContractEntity>: RecordWritingContractSubject {
    /// The store under test, empty when the subject is made.
    public let storage = InMemoryRecordStore<Entity>()

    /// A subject over a new, empty store.
    public init() {}

    /// The store's commit count.
    public func commitCount() async -> Int {
        await storage.commitCount
    }

    /// Seeds the store directly.
    public func seed(_ record: StoredRecord) async {
        await storage.seed(record)
    }

    /// The store's current record.
    public func storedRecord(_ key: RecordKey) async -> StoredRecord? {
        await storage.record(key)
    }
}
