import Cutover

/// The JSON objects `cutover.save_record` and `cutover.read_record` take: a record's key and a
/// format's columns, each value the JSON its column's type reads (a number for bigint and
/// integers, a string for text and uuid, `true`/`false`, `null`). Package-wide, so that the
/// benchmark gives pgbench exactly what the store sends.
package enum RecordJSON {
    /// `{"tenant_id": 7, "id": 42}`: the key's parts under their columns' names.
    static func key(_ key: RecordKey, columns: [RecordKeyColumn]) -> [UInt8] {
        object(zip(columns, key.parts).map { column, part in
            switch part {
            case .bigint(let value): (column.name, .raw(String(value)))
            case .uuid, .text: (column.name, .string(part.description))
            }
        })
    }

    /// `{"status": "paid"}`: a format's column values, in name order.
    package static func columns(_ values: [String: RecordColumnValue]) -> [UInt8] {
        object(values.sorted { $0.key < $1.key }.map { name, value in
            switch value {
            case .null: (name, .raw("null"))
            case .text(let text): (name, .string(text))
            case .integer(let integer): (name, .raw(String(integer)))
            case .boolean(let boolean): (name, .raw(boolean ? "true" : "false"))
            }
        })
    }

    /// A column's value as `jsonb_typeof` names its kind and `#>> '{}'` gives its text; an
    /// object or an array (a `jsonb` column) as its JSON text.
    static func value(kind: String, text: String?) -> RecordColumnValue {
        switch (kind, text) {
        case ("null", _), (_, nil): return .null
        case ("boolean", let text?): return .boolean(text == "true")
        case ("number", let text?): return Int64(text).map(RecordColumnValue.integer) ?? .text(text)
        case (_, let text?): return .text(text)
        }
    }

    /// A member's value: JSON text as it is, or text to write as a JSON string.
    private enum Member {
        case raw(String)
        case string(String)
    }

    /// The object's bytes, written once into one buffer: a save's document is escaped by
    /// ``JSONStringEscaper``, which copies the runs between escapes whole.
    private static func object(_ members: [(String, Member)]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(members.reduce(2) { total, member in
            switch member.1 {
            case .raw(let text), .string(let text): total + member.0.utf8.count + text.utf8.count + 8
            }
        })
        output.append(UInt8(ascii: "{"))
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { output.append(contentsOf: ", ".utf8) }
            JSONStringEscaper.write(name, to: &output)
            output.append(contentsOf: ": ".utf8)
            switch value {
            case .raw(let text): output.append(contentsOf: text.utf8)
            case .string(let text): JSONStringEscaper.write(text, to: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is.
    static func quoted(_ text: String) -> String {
        JSONStringEscaper.quoted(text)
    }
}
