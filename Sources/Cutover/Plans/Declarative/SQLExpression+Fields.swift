extension SQLExpression {
    /// The expression with each column reference read as a field of the record `row`, or nil
    /// when a word in it might be a column the reader does not count as a reference.
    ///
    /// PL/pgSQL evaluates `NEW.status_code := (CASE NEW.status WHEN 'new' THEN 1 END)` as a
    /// simple expression, without the executor and without a function call; a call of the row
    /// function instead plans the function's query again in every transaction. The row function
    /// reads bare names from the row and the sync trigger pins the same `search_path`, so both
    /// read the same columns and call the same functions. Where the reader cannot be sure of a
    /// word (an unreserved keyword such as `year` outside the places the grammar gives it, a
    /// qualified name that is neither a function nor a type), the trigger keeps the call: a
    /// bare column left in the trigger would fail the old application's write at run time.
    ///
    /// ```swift
    /// let up = try SQLExpression.read("CASE status WHEN 'new' THEN 1 END").get()
    /// up.fields(of: "NEW")   // "CASE NEW.status WHEN 'new' THEN 1 END"
    /// ```
    func fields(of row: String) -> String? {
        guard case .success(let lexemes) = Self.lexemes(of: text) else { return nil }
        let tokens = lexemes.map(\.token)
        let references = Self.referenceIndexes(in: tokens)
        let isReference = Set(references)
        for index in tokens.indices where !isReference.contains(index) {
            guard case .word = tokens[index] else { continue }
            guard Self.isSurelyNoColumn(at: index, in: tokens) else { return nil }
        }
        var characters = Array(text)
        for index in references.reversed() {
            guard case .word(let name, _) = tokens[index] else { continue }
            characters.replaceSubrange(lexemes[index].span, with: Array(row + "." + SQLName.identifier(name)))
        }
        return String(characters)
    }

    /// Whether the word at `index`, which the reader does not count as a reference, cannot be a
    /// column where it stands: a reserved keyword, a function's name, a type's, a named
    /// argument, or an unreserved keyword in the one place the grammar gives it.
    private static func isSurelyNoColumn(at index: Int, in tokens: [Token]) -> Bool {
        guard case .word(let name, let isQuoted) = tokens[index] else { return true }
        let next = token(after: index, in: tokens)
        let previous = token(before: index, in: tokens)
        if next == .punctuation(".") || previous == .punctuation(".") { return isFunctionOrTypeChain(around: index, in: tokens) }
        switch next {
        case .punctuation("(")?, .string?, .symbol("=>")?: return true
        default: break
        }
        if startsType(previous) { return true }
        guard !isQuoted else { return false }
        if SQLKeywords.needsQuoting.contains(name) { return true }
        func isWord(_ token: Token?, _ word: String) -> Bool { token == .word(word, isQuoted: false) }
        switch name {
        case "at", "without": return isWord(next, "time")
        case "zone": return isWord(previous, "time")
        case "varying": return isWord(previous, "character")
        case "escape": return next == .string
        case "unknown": return isWord(previous, "is") || isWord(previous, "not")
        case "day", "hour", "minute", "month", "second", "year":
            // interval '1' day, day to second, extract(year from …)
            return previous == .string || isWord(previous, "to") || isWord(next, "to") || isWord(next, "from")
        default: return false
        }
    }

    /// Whether the dotted name around `index` (`public.f`, `public.mood`) names a function
    /// (a `(` follows it) or a type (`::`, `AS` or `COLLATE` comes before it).
    private static func isFunctionOrTypeChain(around index: Int, in tokens: [Token]) -> Bool {
        func isWord(_ position: Int) -> Bool {
            guard tokens.indices.contains(position), case .word = tokens[position] else { return false }
            return true
        }
        var first = index
        while first >= 2, tokens[first - 1] == .punctuation("."), isWord(first - 2) { first -= 2 }
        var last = index
        while last + 2 < tokens.count, tokens[last + 1] == .punctuation("."), isWord(last + 2) { last += 2 }
        return token(after: last, in: tokens) == .punctuation("(") || startsType(token(before: first, in: tokens))
    }

    /// Whether a type's name follows `token`.
    private static func startsType(_ token: Token?) -> Bool {
        switch token {
        case .symbol("::")?, .word("as", isQuoted: false)?, .word("collate", isQuoted: false)?: true
        default: false
        }
    }
}
