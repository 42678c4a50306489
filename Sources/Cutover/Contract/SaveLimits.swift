/// The limits every store enforces before a save touches the ledger.
///
/// Lengths count Unicode scalar values, which is what PostgreSQL's
/// `char_length` counts in a UTF-8 database, so the in-memory store and the
/// PostgreSQL store agree on every boundary. U+0000 is refused in every text
/// field because PostgreSQL text cannot hold it.
public enum SaveLimits {
    /// Characters allowed in an operation scope: 1 to 255.
    public static let operationScopeLength: ClosedRange<Int> = 1...255

    /// Characters allowed in an operation ID: 1 to 255.
    public static let operationIDLength: ClosedRange<Int> = 1...255

    /// Characters allowed in a draft ID: 1 to 255.
    public static let draftIDLength: ClosedRange<Int> = 1...255

    /// The most characters a title may have; a title must not be empty.
    public static let maximumTitleLength = 200

    /// The most characters a body may have; an empty body is allowed.
    public static let maximumBodyLength = 100_000

    /// The most tags a draft may have.
    public static let maximumTagCount = 32

    /// The most characters one tag may have; a tag must not be empty.
    public static let maximumTagLength = 64
}
