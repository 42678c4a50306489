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

extension QualifiedName {
    /// Reads a table's name as a plan's `table` and `phase new --table` take it: `name` or
    /// `schema.name`, each part either exactly as the catalog spells it (without a dot or a
    /// double quote: `Orders`, `Sales Data`) or in double quotes as SQL writes an identifier
    /// (`"Sales Data"."Order Items"`, `public."a.b"`, a double quote inside doubled).
    ///
    /// Nil when the text is not one or two such parts of 1 to 63 bytes each.
    public init?(planText text: String) {
        var parts: [String] = []
        var rest = Substring(text)
        while true {
            var part = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var isClosed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character != "\"" {
                        part.append(character)
                    } else if rest.first == "\"" {
                        part.append("\"")
                        rest = rest.dropFirst()
                    } else {
                        isClosed = true
                        break
                    }
                }
                guard isClosed, rest.isEmpty || rest.first == "." else { return nil }
            } else {
                let end = rest.firstIndex(of: ".") ?? rest.endIndex
                part = String(rest[..<end])
                rest = rest[end...]
                guard !part.contains("\"") else { return nil }
            }
            guard PlanLimits.identifierByteCount.contains(part.utf8.count) else { return nil }
            parts.append(part)
            guard rest.first == "." else { break }
            rest = rest.dropFirst()
        }
        switch parts.count {
        case 1: self.init(schema: nil, name: parts[0])
        case 2: self.init(schema: parts[0], name: parts[1])
        default: return nil
        }
    }

    /// The name as a plan writes it and ``init(planText:)`` reads it back: each part as the
    /// catalog spells it, in double quotes when it holds a dot or a double quote.
    public var planText: String {
        func part(_ text: String) -> String {
            guard text.contains(where: { $0 == "." || $0 == "\"" }) else { return text }
            return "\"" + text.flatMap { $0 == "\"" ? "\"\"" : String($0) } + "\""
        }
        return (schema.map { part($0) + "." } ?? "") + part(name)
    }

    /// What ``init(planText:)`` accepts, as a refusal names it.
    public static let planTextForms = "name or schema.name, each part 1 to 63 bytes as the catalog spells it, or in double quotes as SQL writes it"
}
