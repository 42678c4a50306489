/// The statements of a SQL text, split as PostgreSQL's own lexer would split them.
///
/// A semicolon ends a statement unless it stands inside a string (`'…'`, with `''` for a quote;
/// `E'…'`, where a backslash escapes too), a quoted identifier (`"…"`), a dollar-quoted body
/// (`$tag$ … $tag$`), a line comment (`-- …`) or a block comment (`/* … */`, which nests).
/// Comments are left out of the statements; everything else is kept as written, trimmed, and
/// empty statements are dropped.
///
/// ```swift
/// SQLStatements.split("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$; SELECT f();")
/// // ["CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$", "SELECT f()"]
/// ```
public enum SQLStatements {
    /// The statements of `sql`, in order.
    public static func split(_ sql: String) -> [String] {
        var statements: [String] = []
        var current: [Character] = []
        let text = Array(sql)
        var index = 0
        func copy(until end: Int) {
            current.append(contentsOf: text[index..<min(end, text.count)])
            index = min(end, text.count)
        }
        while index < text.count {
            let character = text[index]
            let next: Character? = index + 1 < text.count ? text[index + 1] : nil
            switch character {
            case "-" where next == "-":
                while index < text.count, text[index] != "\n" { index += 1 }
                current.append(" ")
            case "/" where next == "*":
                var depth = 0
                while index < text.count {
                    if text[index] == "/", index + 1 < text.count, text[index + 1] == "*" {
                        depth += 1
                        index += 2
                    } else if text[index] == "*", index + 1 < text.count, text[index + 1] == "/" {
                        depth -= 1
                        index += 2
                        if depth == 0 { break }
                    } else {
                        index += 1
                    }
                }
                current.append(" ")
            case "'":
                let escapes = isEscapeStringPrefix(text, before: index)
                copy(until: quotedEnd(text, from: index, quote: "'", backslashEscapes: escapes))
            case "\"":
                copy(until: quotedEnd(text, from: index, quote: "\"", backslashEscapes: false))
            case "$":
                if let tag = dollarTag(text, at: index), !isIdentifierCharacter(index > 0 ? text[index - 1] : " ") {
                    copy(until: dollarQuotedEnd(text, from: index, tag: tag))
                } else {
                    copy(until: index + 1)
                }
            case ";":
                statements.append(String(current))
                current = []
                index += 1
            default:
                copy(until: index + 1)
            }
        }
        statements.append(String(current))
        return statements.map(trimmed).filter { !$0.isEmpty }
    }

    /// Whether the quote at `index` opens an `E'…'` string (the letter not part of a longer word).
    private static func isEscapeStringPrefix(_ text: [Character], before index: Int) -> Bool {
        guard index > 0, text[index - 1] == "e" || text[index - 1] == "E" else { return false }
        return index < 2 || !isIdentifierCharacter(text[index - 2])
    }

    /// The index just past the quote that closes the quoted text opened at `start`.
    private static func quotedEnd(_ text: [Character], from start: Int, quote: Character, backslashEscapes: Bool) -> Int {
        var index = start + 1
        while index < text.count {
            if backslashEscapes, text[index] == "\\" {
                index += 2
                continue
            }
            if text[index] == quote {
                if index + 1 < text.count, text[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return text.count
    }

    /// The dollar-quote tag (`$$` or `$name$`) starting at `index`, or nil for `$1` and the like.
    private static func dollarTag(_ text: [Character], at index: Int) -> [Character]? {
        var end = index + 1
        if end < text.count, text[end].isNumber { return nil }
        while end < text.count, isIdentifierCharacter(text[end]), text[end] != "$" { end += 1 }
        guard end < text.count, text[end] == "$" else { return nil }
        return Array(text[index...end])
    }

    /// The index just past the tag that closes the body opened by `tag` at `start`.
    private static func dollarQuotedEnd(_ text: [Character], from start: Int, tag: [Character]) -> Int {
        var index = start + tag.count
        while index + tag.count <= text.count {
            if text[index] == "$", Array(text[index..<(index + tag.count)]) == tag { return index + tag.count }
            index += 1
        }
        return text.count
    }

    private static func isIdentifierCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "$"
    }

    private static func trimmed(_ text: String) -> String {
        var characters = Substring(text)
        while let first = characters.first, first.isWhitespace { characters = characters.dropFirst() }
        while let last = characters.last, last.isWhitespace { characters = characters.dropLast() }
        return String(characters)
    }
}
