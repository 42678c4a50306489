/// An SQL expression over one row of the plan's table, as a plan writes it for `up`, `down`,
/// `default`, `check` or an index's `where`, read without a server.
///
/// The reader splits the text into PostgreSQL's tokens and refuses what cannot be one
/// expression over the row: a `;`, a parameter or dollar quote (`$1`, `$$`), a comment, a
/// query word (`SELECT`, `VALUES`: a lookup belongs in a function), brackets that do not
/// balance, a string or quoted identifier left open. It finds the column references: names
/// that are not keywords, not a function's name (before `(`), not a qualifier or a qualified
/// part (`schema.f`), not a type (after `::`, `AS`, `COLLATE`, or before a string as in
/// `date '2024-01-01'`), not a named argument (before `=>`). Unquoted names fold to lower
/// case as PostgreSQL folds them. Whether the server accepts the rest is checked by the server.
///
/// ```swift
/// let up = try SQLExpression("CASE status WHEN 'new' THEN 1 END").get()
/// up.columns   // ["status"]
/// ```
public struct SQLExpression: Sendable, Hashable {
    /// The expression as written.
    public let text: String
    /// The columns it references, each once, in order of first appearance.
    public let columns: [String]

    /// The expression in `text`, or why it is not one.
    static func read(_ text: String) -> Result<SQLExpression, SQLExpressionProblem> {
        switch tokens(of: text) {
        case .failure(let problem): return .failure(problem)
        case .success(let tokens):
            guard !tokens.isEmpty else { return .failure(.empty) }
            var depth = 0
            for token in tokens {
                switch token {
                case .punctuation("("), .punctuation("["): depth += 1
                case .punctuation(")"), .punctuation("]"):
                    depth -= 1
                    if depth < 0 { return .failure(.unbalanced) }
                case .punctuation(";"): return .failure(.semicolon)
                case .word(let word, isQuoted: false) where SQLKeywords.queryWords.contains(word):
                    return .failure(.query(word))
                default: break
                }
            }
            guard depth == 0 else { return .failure(.unbalanced) }
            return .success(SQLExpression(text: text, columns: references(in: tokens)))
        }
    }

    /// A token of PostgreSQL's lexical grammar, as far as finding references needs.
    enum Token: Hashable {
        /// An identifier or keyword, folded to lower case unless quoted.
        case word(String, isQuoted: Bool)
        /// A string literal (standard, `E''`, `B''`, `X''`, `U&''`).
        case string
        /// A numeric literal.
        case number
        /// An operator such as `::`, `=>`, `||` or `->>`.
        case symbol(String)
        /// One of `( ) [ ] , ; .`.
        case punctuation(Character)
    }

    private static func references(in tokens: [Token]) -> [String] {
        var found: [String] = []
        for index in referenceIndexes(in: tokens) {
            guard case .word(let name, _) = tokens[index], !found.contains(name) else { continue }
            found.append(name)
        }
        return found
    }

    /// Where `tokens` reference a column.
    static func referenceIndexes(in tokens: [Token]) -> [Int] {
        tokens.indices.filter { index in
            guard case .word(let name, let isQuoted) = tokens[index] else { return false }
            if !isQuoted, SQLKeywords.notColumns.contains(name) { return false }
            switch token(after: index, in: tokens) {
            case .punctuation("(")?, .punctuation(".")?, .string?, .symbol("=>")?: return false
            default: break
            }
            switch token(before: index, in: tokens) {
            case .symbol("::")?, .punctuation(".")?, .word("as", isQuoted: false)?, .word("collate", isQuoted: false)?: return false
            default: return true
            }
        }
    }

    static func token(after index: Int, in tokens: [Token]) -> Token? {
        index + 1 < tokens.count ? tokens[index + 1] : nil
    }

    static func token(before index: Int, in tokens: [Token]) -> Token? {
        index > 0 ? tokens[index - 1] : nil
    }

    private static let punctuation: Set<Character> = ["(", ")", "[", "]", ",", ";", "."]
    private static let operatorCharacters: Set<Character> = ["+", "-", "*", "/", "<", ">", "=", "~", "!", "@", "#", "%", "^", "&", "|", "`", "?", ":"]

    static func tokens(of text: String) -> Result<[Token], SQLExpressionProblem> {
        lexemes(of: text).map { $0.map(\.token) }
    }

    /// The tokens of `text`, each with the characters it spans.
    static func lexemes(of text: String) -> Result<[(token: Token, span: Range<Int>)], SQLExpressionProblem> {
        let characters = Array(text)
        var tokens: [Token] = []
        var spans: [Range<Int>] = []
        var index = 0
        func at(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace { index += 1; continue }
            let start = index
            let count = tokens.count
            defer { if tokens.count > count { spans.append(start..<index) } }
            if character == "-", at(1) == "-" { return .failure(.comment) }
            if character == "/", at(1) == "*" { return .failure(.comment) }
            if character == "$" { return .failure(.dollar) }
            if character == "'" {
                guard let end = closing(characters, from: index + 1, quote: "'", backslashEscapes: false) else {
                    return .failure(.unterminatedString)
                }
                tokens.append(.string)
                index = end
                continue
            }
            if character == "\"" {
                guard let end = closing(characters, from: index + 1, quote: "\"", backslashEscapes: false) else {
                    return .failure(.unterminatedIdentifier)
                }
                let name = String(characters[(index + 1)..<(end - 1)]).replacing("\"\"", with: "\"")
                guard !name.isEmpty else { return .failure(.unterminatedIdentifier) }
                tokens.append(.word(name, isQuoted: true))
                index = end
                continue
            }
            if character.isLetter || character == "_" {
                var end = index
                while end < characters.count, characters[end].isLetter || characters[end].isNumber
                        || characters[end] == "_" || characters[end] == "$" {
                    end += 1
                }
                let word = String(characters[index..<end]).lowercased()
                if end < characters.count, characters[end] == "'", ["e", "b", "x", "n"].contains(word) {
                    guard let close = closing(characters, from: end + 1, quote: "'", backslashEscapes: word == "e") else {
                        return .failure(.unterminatedString)
                    }
                    tokens.append(.string)
                    index = close
                    continue
                }
                tokens.append(.word(word, isQuoted: false))
                index = end
                continue
            }
            if character.isNumber {
                while index < characters.count, characters[index].isNumber || characters[index] == "."
                        || characters[index] == "_" || characters[index].isLetter {
                    index += 1
                }
                tokens.append(.number)
                continue
            }
            if punctuation.contains(character) {
                tokens.append(.punctuation(character))
                index += 1
                continue
            }
            if operatorCharacters.contains(character) {
                var end = index
                while end < characters.count, operatorCharacters.contains(characters[end]) {
                    if characters[end] == "-", end + 1 < characters.count, characters[end + 1] == "-" { return .failure(.comment) }
                    if characters[end] == "/", end + 1 < characters.count, characters[end + 1] == "*" { return .failure(.comment) }
                    end += 1
                }
                tokens.append(.symbol(String(characters[index..<end])))
                index = end
                continue
            }
            return .failure(.unexpected(character))
        }
        return .success(Array(zip(tokens, spans)))
    }

    /// The index just past the quote that closes a quoted token whose body starts at `start`.
    private static func closing(_ characters: [Character], from start: Int, quote: Character, backslashEscapes: Bool) -> Int? {
        var index = start
        while index < characters.count {
            let character = characters[index]
            if backslashEscapes, character == "\\" { index += 2; continue }
            if character == quote {
                if index + 1 < characters.count, characters[index + 1] == quote { index += 2; continue }
                return index + 1
            }
            index += 1
        }
        return nil
    }
}

/// Why a plan's text is not one SQL expression over the row.
public enum SQLExpressionProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing but white space.
    case empty
    /// A `;`, which would end the statement the expression is put in.
    case semicolon
    /// A `--` or `/* */` comment.
    case comment
    /// A `$`: a parameter or a dollar-quoted string.
    case dollar
    /// A word that begins a query, such as `SELECT`.
    case query(String)
    /// Brackets that do not pair up.
    case unbalanced
    /// A string literal that is never closed.
    case unterminatedString
    /// A quoted identifier that is never closed, or empty.
    case unterminatedIdentifier
    /// A character no token begins with.
    case unexpected(Character)

    /// What was found, for `expected …; found …`.
    public var description: String {
        switch self {
        case .empty: "nothing"
        case .semicolon: "a ; (one expression only)"
        case .comment: "a comment"
        case .dollar: "a $ (no parameters or dollar quotes)"
        case .query(let word): "the query word \(word.uppercased()) (a lookup belongs in a schema-qualified function)"
        case .unbalanced: "brackets that do not pair up"
        case .unterminatedString: "a string literal that is not closed"
        case .unterminatedIdentifier: "a quoted identifier that is not closed or is empty"
        case .unexpected(let character): "the character \(DisplayText.unquoted(String(character)))"
        }
    }
}
