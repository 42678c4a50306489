/// Quoting and naming for the SQL a declarative plan compiles to: identifiers, literals and
/// the names of the objects the compiler creates.
///
/// Identifiers are written bare when PostgreSQL would read them back unchanged (lower-case
/// letters, digits, `_` and `$`, not a keyword that needs quoting) and double-quoted otherwise.
/// A name the compiler makes up is cut to PostgreSQL's 63 bytes with a hash of the whole
/// name, so two long names never collide after the cut.
enum SQLName {
    /// PostgreSQL's identifier limit in bytes (NAMEDATALEN - 1).
    static let maximumByteCount = 63

    /// `name` as an SQL identifier: `status_code`, `"Order"`, `"select"`.
    static func identifier(_ name: String) -> String {
        if isBare(name) { return name }
        return "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// `text` as an SQL string literal: `'it''s'`.
    static func literal(_ text: String) -> String {
        "'" + text.replacing("'", with: "''") + "'"
    }

    /// `body` between dollar quotes of a tag it does not hold: `$tag$…$tag$`, or `$tag_1$…$tag_1$`
    /// when it holds `$tag$`, and so on. A plan's names, literals and expressions may hold any
    /// text, a tag included; a body that held it would end early and run the rest as SQL.
    static func dollarQuoted(_ body: String, tag: String) -> String {
        var quote = "$\(tag)$"
        var suffix = 0
        while body.contains(quote) {
            suffix += 1
            quote = "$\(tag)_\(suffix)$"
        }
        return quote + body + quote
    }

    /// `block` on lines of its own between dollar quotes of a tag it does not hold
    /// (``dollarQuoted(_:tag:)``), as a `DO` block or a function's body is written.
    static func dollarQuotedBlock(_ block: String, tag: String) -> String {
        dollarQuoted("\n" + block + "\n", tag: tag)
    }

    /// A made-up name from `parts` joined by `_`, cut to 63 bytes with a hash when longer.
    static func derived(_ parts: String...) -> String {
        let whole = parts.joined(separator: "_")
        guard whole.utf8.count > maximumByteCount else { return whole }
        let suffix = "_" + hash(whole)
        var cut = ""
        for character in whole {
            guard cut.utf8.count + String(character).utf8.count + suffix.utf8.count <= maximumByteCount else { break }
            cut.append(character)
        }
        return cut + suffix
    }

    /// Eight hex digits of the 32-bit FNV-1a hash of `text`'s UTF-8 bytes.
    private static func hash(_ text: String) -> String {
        var value: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            value ^= UInt32(byte)
            value = value &* 0x0100_0193
        }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    private static func isBare(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || ("a"..."z").contains(first) else { return false }
        let isSimple = name.unicodeScalars.allSatisfy { $0 == "_" || $0 == "$" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
        return isSimple && !SQLKeywords.needsQuoting.contains(name)
    }
}
