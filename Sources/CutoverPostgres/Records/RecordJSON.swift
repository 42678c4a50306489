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
            case .bigint(let value): (column.name, String(value))
            case .uuid, .text: (column.name, quoted(part.description))
            }
        })
    }

    /// `{"status": "paid"}`: a format's column values, in name order.
    package static func columns(_ values: [String: RecordColumnValue]) -> [UInt8] {
        object(values.sorted { $0.key < $1.key }.map { name, value in
            switch value {
            case .null: (name, "null")
            case .text(let text): (name, quoted(text))
            case .integer(let integer): (name, String(integer))
            case .boolean(let boolean): (name, boolean ? "true" : "false")
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

    private static func object(_ members: [(String, String)]) -> [UInt8] {
        Array(("{" + members.map { quoted($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}").utf8)
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
