import Cutover

/// A store under the record contract suite, with what the suite needs to look inside it.
public protocol RecordWritingContractSubject<Entity>: Sendable {
    /// The entity the store holds.
    associatedtype Entity: RecordContractEntity
    /// The store's type.
    associatedtype Storage: RecordStorage where Storage.Entity == Entity

    /// The store both writer paths commit through.
    var storage: Storage { get }

    /// How many saves have committed.
    func commitCount() async throws -> Int

    /// Places a record without a commit or a ledger entry.
    func seed(_ record: StoredRecord) async throws

    /// The record as stored now, or nil.
    func storedRecord(_ key: RecordKey) async throws -> StoredRecord?

    /// Whether a write in one format also sets the other format's columns (a table whose plan's
    /// sync trigger derives them, from expand until contract), rather than leaving them as they were.
    var synchronizesFormats: Bool { get }
}

extension RecordWritingContractSubject {
    /// A store leaves the other format's columns as they were unless it says otherwise.
    public var synchronizesFormats: Bool { false }
}
