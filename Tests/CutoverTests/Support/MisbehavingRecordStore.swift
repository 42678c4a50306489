import Cutover
import CutoverTestSupport
import Synchronization

/// A record store with one planted defect over the reference store, to prove the record contract suite catches it.
final class MisbehavingRecordStore<Entity: RecordContractEntity>: RecordStorage {
    enum Defect: String, Sendable, CaseIterable {
        /// Gives every call a fresh operation ID, as a store without a ledger would.
        case forgetsOperations
        /// Saves over whatever revision is current, as an unconditional UPDATE would.
        case skipsRevisionCheck
        /// Cuts an overlong operation ID to the limit instead of refusing it.
        case acceptsOverlongOperationIDs
        /// Stores no content columns.
        case dropsColumns
        /// Keys records by their first key part only, as a store that ignores a composite key's tenant would.
        case keysByFirstPartOnly
    }

    let defect: Defect
    let reference = InMemoryRecordStore<Entity>()
    private let calls = Atomic<Int>(0)

    init(_ defect: Defect) {
        self.defect = defect
    }

    func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) async throws
        -> RecordSaveResult<Entity> {
        var request = request
        var write = write
        switch defect {
        case .forgetsOperations:
            request.operationID += "#\(calls.add(1, ordering: .relaxed).newValue)"
        case .skipsRevisionCheck:
            request.expectedRevision = await reference.record(request.key)?.revision ?? 0
        case .acceptsOverlongOperationIDs:
            request.operationID = String(request.operationID.prefix(SaveLimits.operationIDLength.upperBound))
        case .dropsColumns:
            write = [:]
        case .keysByFirstPartOnly:
            request.key = Self.withoutTenant(request.key)
        }
        return try await reference.commit(request, write: write, path: path)
    }

    /// A composite key with its first part replaced by one constant tenant; other keys unchanged.
    static func withoutTenant(_ key: RecordKey) -> RecordKey {
        guard key.parts.count > 1 else { return key }
        return RecordKey(parts: [.bigint(0)] + key.parts.dropFirst())
    }
}

/// ``MisbehavingRecordStore`` as a contract subject.
struct MisbehavingRecordSubject<Entity: RecordContractEntity>: RecordWritingContractSubject {
    let storage: MisbehavingRecordStore<Entity>

    init(_ defect: MisbehavingRecordStore<Entity>.Defect) {
        storage = MisbehavingRecordStore(defect)
    }

    func commitCount() async -> Int { await storage.reference.commitCount }
    func seed(_ record: StoredRecord) async { await storage.reference.seed(record) }
    func storedRecord(_ key: RecordKey) async -> StoredRecord? {
        let key = storage.defect == .keysByFirstPartOnly ? MisbehavingRecordStore<Entity>.withoutTenant(key) : key
        return await storage.reference.record(key)
    }
}
