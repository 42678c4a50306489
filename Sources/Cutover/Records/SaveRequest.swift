/// One conditional save of a record of `Entity`, with the identity that makes retrying it safe.
///
/// The generic form of ``SaveDraft``: (``operationScope``, ``operationID``) names the
/// operation, ``expectedRevision`` makes the save conditional (0 creates the record).
///
/// ```swift
/// let request = SaveRequest<Orders>(operationScope: "shop-1", operationID: "pay-9",
///                                   key: RecordKey(.bigint(42)), expectedRevision: 3, content: .paid)
/// ```
public struct SaveRequest<Entity: RecordEntity>: Sendable, Hashable {
    /// The tenant or account an operation ID belongs to.
    public var operationScope: String

    /// The caller's identity for this save; reuse it, and only it, when retrying.
    public var operationID: String

    /// The record to create or update.
    public var key: RecordKey

    /// The revision the caller last read: 0 to create the record, otherwise its current revision.
    public var expectedRevision: Int64

    /// What the record should say after the save.
    public var content: Entity.Content

    /// Creates a save request.
    @inlinable
    public init(operationScope: String, operationID: String, key: RecordKey, expectedRevision: Int64, content: Entity.Content) {
        self.operationScope = operationScope
        self.operationID = operationID
        self.key = key
        self.expectedRevision = expectedRevision
        self.content = content
    }

    /// The first field of every canonical encoding; a new layout gets a new tag.
    @inlinable
    public static var canonicalEncodingTag: String { "cutover.save-record.1" }

    /// The request as canonical bytes for the ledger's fingerprint; the writer path is not part of it.
    ///
    /// Layout (see ``CanonicalEncoder``): the tag, the plan name, the scope and the
    /// operation ID as text, the key (``RecordKey/encode(into:)``), the expected
    /// revision as 8 bytes, then the content as ``RecordEntity/encodeContent(_:into:)`` writes it.
    @inlinable
    public var canonicalEncoding: [UInt8] {
        // Room for the fixed fields and a small content, so that the buffer is not copied as it grows.
        var encoder = CanonicalEncoder(reservingCapacity: 256 + operationScope.utf8.count + operationID.utf8.count
                                                          + key.parts.reduce(0) { total, part in
                                                              if case .text(let text) = part { total + 17 + text.utf8.count } else { total + 17 }
                                                          })
        encoder.append(Self.canonicalEncodingTag)
        encoder.append(Entity.planName)
        encoder.append(operationScope)
        encoder.append(operationID)
        key.encode(into: &encoder)
        encoder.append(expectedRevision)
        Entity.encodeContent(content, into: &encoder)
        return encoder.bytes
    }

    /// The first limit this request breaks, or nil: scope, operation ID, key, expected revision, content.
    @inlinable
    public var violation: SaveViolation? {
        let limits = Entity.limits
        if let broken = SaveDraft.check(operationScope, .operationScope, limits.operationScopeLength)
            ?? SaveDraft.check(operationID, .operationID, limits.operationIDLength) {
            return broken
        }
        let columns = Entity.keyColumns
        guard key.parts.count == columns.count, zip(columns, key.parts).allSatisfy({ $0.accepts($1) }) else {
            return .keyShape(expected: columns.count)
        }
        for (index, part) in key.parts.enumerated() {
            if case .text(let text) = part, let broken = SaveDraft.check(text, .keyPart(index: index), limits.textKeyLength) {
                return broken
            }
        }
        if expectedRevision < 0 { return .negativeExpectedRevision }
        return Entity.violation(of: content)
    }

    /// Throws ``SaveFailure/invalid(_:)`` if the request breaks a limit; every store calls this first.
    @inlinable
    public func validate() throws(SaveFailure) {
        if let violation { throw .invalid(violation) }
    }

    /// The revision this save commits over a record at `current` (nil: none), or why it cannot; as ``SaveDraft/committedRevision(over:)``.
    public func committedRevision(over current: Int64?) throws(SaveFailure) -> Int64 {
        try SaveDraft.committedRevision(expected: expectedRevision, over: current)
    }
}
