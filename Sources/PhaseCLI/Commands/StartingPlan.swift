/// The `plan.json` that `phase new` writes: a declarative plan (format 2) for an inspected
/// table, whose one operation is a template with placeholders.
///
/// Each placeholder is text the plan reader refuses, so that a plan nobody edited can never
/// run: the name is longer than PostgreSQL's 63 bytes, the type is not a type (it holds `<`),
/// and the expression reads columns that do not exist. A valid example operation would
/// instead add a column named `example` to a production table the first time someone ran
/// `phase expand` without reading the plan.
struct StartingPlan: Sendable, Equatable {
    let name: String
    let table: String
    let key: [String]
    let legacyApplicationPattern: String
    let modernWriterWindow: String

    /// The placeholder of the new column's name.
    static let namePlaceholder = "<edit: the name of the column to add, 1 to 63 bytes, such as description>"
    /// The placeholder of its type.
    static let typePlaceholder = "<edit: its type, such as text, smallint or varchar(255)>"
    /// The placeholder of its `up` expression.
    static let upPlaceholder = "<edit: the value old rows and old writers get, an SQL expression over the row such as lower(name)>"

    /// The manifest, keys in the order the reference lists them, ending in a newline.
    var manifest: String {
        let key = key.count == 1 ? Self.string(key[0]) : "[" + key.map(Self.string).joined(separator: ", ") + "]"
        return """
            {
              "format": 2,
              "name": \(Self.string(name)),
              "table": \(Self.string(table)),
              "key": \(key),
              "legacyApplicationPattern": \(Self.string(legacyApplicationPattern)),
              "modernWriterWindow": \(Self.string(modernWriterWindow)),
              "operations": [
                {"add_column": {"name": \(Self.string(Self.namePlaceholder)),
                                "type": \(Self.string(Self.typePlaceholder)),
                                "up": \(Self.string(Self.upPlaceholder)),
                                "notNull": true}}
              ]
            }

            """
    }

    private static func string(_ text: String) -> String {
        JSONResult.string(text).text()
    }
}
