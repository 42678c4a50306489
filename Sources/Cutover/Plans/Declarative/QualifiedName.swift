/// A table's name as a plan gives it: `users` or `public.users`, each part at most 63 bytes.
public struct QualifiedName: Sendable, Hashable, CustomStringConvertible {
    /// The schema, when the plan names one; nil finds the table on the `search_path`.
    public let schema: String?
    /// The table's own name.
    public let name: String

    /// A name from its parts.
    public init(schema: String?, name: String) {
        self.schema = schema
        self.name = name
    }

    /// The name as SQL: `public.users`, `"Sales"."Orders"`.
    public var sql: String {
        (schema.map { SQLName.identifier($0) + "." } ?? "") + SQLName.identifier(name)
    }

    /// The name as `to_regclass` reads it and `cutover.legacy_activity` keys it: the SQL form.
    public var description: String { sql }
}
