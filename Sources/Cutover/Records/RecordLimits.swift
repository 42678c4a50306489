/// The limits a record request's identity must keep before a store touches its ledger.
///
/// Lengths count Unicode scalar values, as PostgreSQL's `char_length` does.
public struct RecordLimits: Sendable, Hashable {
    /// Characters allowed in an operation scope.
    public var operationScopeLength: ClosedRange<Int>

    /// Characters allowed in an operation ID.
    public var operationIDLength: ClosedRange<Int>

    /// Characters allowed in each text part of a key.
    public var textKeyLength: ClosedRange<Int>

    /// Limits as given.
    public init(operationScopeLength: ClosedRange<Int>, operationIDLength: ClosedRange<Int>, textKeyLength: ClosedRange<Int>) {
        self.operationScopeLength = operationScopeLength
        self.operationIDLength = operationIDLength
        self.textKeyLength = textKeyLength
    }

    /// The drafts' limits: 1 to 255 characters for the scope, the operation ID and text keys.
    public static let standard = RecordLimits(
        operationScopeLength: SaveLimits.operationScopeLength,
        operationIDLength: SaveLimits.operationIDLength,
        textKeyLength: SaveLimits.draftIDLength)
}
