/// The one commit boundary that both writer paths of an entity write through.
///
/// A conformer does, atomically and in this order: validate the request; claim
/// (scope, operation ID) in its ledger, replaying the recorded result for an identical
/// request (by ``SaveRequest/canonicalEncoding``) and throwing
/// ``SaveFailure/operationConflict`` for a different one; check the revision
/// (``SaveRequest/committedRevision(over:)``); then merge `write` into the record's
/// columns, record the ledger entry with `path`, and count one commit. A failure at
/// any step leaves nothing behind, the ledger claim included.
public protocol RecordStorage<Entity>: Sendable {
    /// The entity this store holds.
    associatedtype Entity: RecordEntity

    /// Commits `write`, the request's content in `path`'s format, once per operation, or replays the operation's result.
    func commit(_ request: SaveRequest<Entity>, write: [String: RecordColumnValue], path: SavePath) async throws
        -> RecordSaveResult<Entity>
}
