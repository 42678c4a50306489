import Cutover

/// The JSON objects `cutover.save_record` and `cutover.read_record` take: a record's key and a
/// format's columns, each value the JSON its column's type reads (a number for bigint and
/// integers, a string for text and uuid, `true`/`false`, `null`).
enum RecordJSON {
    /// `{"tenant_id": 7, "id": 42}`: the key's parts under their columns' names.
    static func key(_ key: RecordKey, columns: [RecordKeyColumn]) -> [UInt8] {
        var object = ObjectWriter(capacity: 64)
        for (column, part) in zip(columns, key.parts) {
            switch part {
            case .bigint(let value): object.member(column.name, raw: String(value))
            case .text(let text): object.member(column.name, string: text)
            case .uuid: object.member(column.name, string: part.description)
            }
        }
        return object.finish()
    }

    /// `{"status": "paid"}`: a format's column values, in name order.
    static func columns(_ values: [String: RecordColumnValue]) -> [UInt8] {
        var object = ObjectWriter(capacity: values.reduce(2) { total, member in
            if case .text(let text) = member.value { total + member.key.utf8.count + text.utf8.count + 8 } else { total + member.key.utf8.count + 24 }
        })
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .null: object.member(name, raw: "null")
            case .text(let text): object.member(name, string: text)
            case .integer(let integer): object.member(name, raw: String(integer))
            case .boolean(let boolean): object.member(name, raw: boolean ? "true" : "false")
            }
        }
        return object.finish()
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

    /// A JSON object's bytes, written member by member into one buffer: a save's document is
    /// escaped by ``JSONStringEscaper``, which copies the runs between escapes whole.
    private struct ObjectWriter {
        private var output: [UInt8] = []

        init(capacity: Int) {
            output.reserveCapacity(capacity)
            output.append(UInt8(ascii: "{"))
        }

        /// A member whose value is JSON text as it is.
        mutating func member(_ name: String, raw: String) {
            start(name)
            output.append(contentsOf: raw.utf8)
        }

        /// A member whose value is text, written as a JSON string.
        mutating func member(_ name: String, string: String) {
            start(name)
            JSONStringEscaper.write(string, to: &output)
        }

        private mutating func start(_ name: String) {
            if output.count > 1 { output.append(contentsOf: ", ".utf8) }
            JSONStringEscaper.write(name, to: &output)
            output.append(contentsOf: ": ".utf8)
        }

        consuming func finish() -> [UInt8] {
            output.append(UInt8(ascii: "}"))
            return output
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is.
    static func quoted(_ text: String) -> String {
        JSONStringEscaper.quoted(text)
    }
}
