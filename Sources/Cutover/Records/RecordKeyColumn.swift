/// One column of an entity's key: its name and its kind.
public struct RecordKeyColumn: Sendable, Hashable {
    /// The kinds a key column may have.
    public enum Kind: String, Sendable, Hashable {
        /// `bigint`.
        case bigint
        /// `uuid`.
        case uuid
        /// `text`.
        case text
    }

    /// The column's name in the table.
    public var name: String

    /// The column's type.
    public var kind: Kind

    /// A key column.
    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// Whether `part` is of this column's kind.
    public func accepts(_ part: RecordKeyPart) -> Bool {
        switch (kind, part) {
        case (.bigint, .bigint), (.uuid, .uuid), (.text, .text): true
        default: false
        }
    }
}
