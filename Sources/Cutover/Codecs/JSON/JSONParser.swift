/// Parses JSON (RFC 8259) strictly, reporting problems by byte offset and never by content.
///
/// The input must be UTF-8 throughout. Any input that ends before the value is
/// complete is ``MalformedDraftProblem/truncated``, so every proper prefix of a
/// document reads as truncated rather than as a syntax error. Nesting is bounded
/// so hostile input cannot exhaust the stack.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private let allowsRepeatedNames: Bool
    private var offset = 0
    private var depth = 0

    private init(bytes: [UInt8], allowsRepeatedNames: Bool) {
        self.bytes = bytes
        self.allowsRepeatedNames = allowsRepeatedNames
    }

    /// The single JSON value `bytes` hold, surrounded by optional whitespace.
    ///
    /// An object that names a member twice is ``MalformedDraftProblem/duplicateField(byteOffset:)``
    /// unless `allowingRepeatedNames` is true; then every member is kept, in document
    /// order, for a reader that reports repeats by where they are in the document.
    static func parse(
        _ bytes: [UInt8], allowingRepeatedNames: Bool = false
    ) throws(MalformedDraftProblem) -> JSONValue {
        try UTF8Validation.validate(bytes)
        var parser = JSONParser(bytes: bytes, allowsRepeatedNames: allowingRepeatedNames)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw .trailingData(byteOffset: parser.offset) }
        return value
    }

    private mutating func parseValue() throws(MalformedDraftProblem) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .boolean(true)
        case UInt8(ascii: "f"): try expect("false"); return .boolean(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw .invalidSyntax(byteOffset: offset)
        }
    }

    private mutating func parseObject() throws(MalformedDraftProblem) -> JSONValue {
        try enterNesting()
        var members: [JSONMember] = []
        var names: Set<[UInt8]> = []
        if try !isEmptyContainer(closedBy: "}") {
            repeat {
                skipWhitespace()
                let nameOffset = offset
                guard try peek() == UInt8(ascii: "\"") else { throw .invalidSyntax(byteOffset: offset) }
                let name = try parseString()
                guard allowsRepeatedNames || names.insert(Array(name.utf8)).inserted else {
                    throw .duplicateField(byteOffset: nameOffset)
                }
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                members.append(JSONMember(name: name, value: try parseValue()))
            } while try continuesContainer(closedBy: "}")
        }
        depth -= 1
        return .object(members)
    }

    private mutating func parseArray() throws(MalformedDraftProblem) -> JSONValue {
        try enterNesting()
        var elements: [JSONValue] = []
        if try !isEmptyContainer(closedBy: "]") {
            repeat {
                skipWhitespace()
                elements.append(try parseValue())
            } while try continuesContainer(closedBy: "]")
        }
        depth -= 1
        return .array(elements)
    }

    /// Counts one more level of nesting and steps over the opening bracket.
    private mutating func enterNesting() throws(MalformedDraftProblem) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw .nestingTooDeep(maximum: Self.maximumDepth) }
        offset += 1
    }

    /// True, with the closing bracket consumed, when the container has no elements.
    private mutating func isEmptyContainer(closedBy close: Unicode.Scalar) throws(MalformedDraftProblem) -> Bool {
        skipWhitespace()
        guard try peek() == UInt8(ascii: close) else { return false }
        offset += 1
        return true
    }

    /// After an element: true at a comma, false at the closing bracket (both consumed).
    private mutating func continuesContainer(closedBy close: Unicode.Scalar) throws(MalformedDraftProblem) -> Bool {
        skipWhitespace()
        let byte = try peek()
        offset += 1
        if byte == UInt8(ascii: ",") { return true }
        if byte == UInt8(ascii: close) { return false }
        throw .invalidSyntax(byteOffset: offset - 1)
    }

    private mutating func parseString() throws(MalformedDraftProblem) -> String {
        offset += 1
        var text: [UInt8] = []
        while true {
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                // The input was validated as UTF-8 and escapes add whole scalars, so this cannot repair anything.
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &text)
            case 0x00..<0x20:
                throw .invalidSyntax(byteOffset: offset)
            default:
                text.append(byte)
                offset += 1
            }
        }
    }

    private mutating func parseEscape(into text: inout [UInt8]) throws(MalformedDraftProblem) {
        let start = offset
        offset += 1
        let letter = try peek()
        offset += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F,
            UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A,
            UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
        ]
        if let byte = simple[letter] {
            text.append(byte)
            return
        }
        guard letter == UInt8(ascii: "u") else { throw .invalidSyntax(byteOffset: start) }
        var value = try parseHexQuad()
        if (0xDC00...0xDFFF).contains(value) { throw .invalidSyntax(byteOffset: start) }
        if (0xD800...0xDBFF).contains(value) {
            // A high surrogate is only meaningful followed by an escaped low surrogate.
            try expect("\\u")
            let low = try parseHexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw .invalidSyntax(byteOffset: start) }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else { throw .invalidSyntax(byteOffset: start) }
        text.append(contentsOf: String(Character(scalar)).utf8)
    }

    private mutating func parseHexQuad() throws(MalformedDraftProblem) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = try peek()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidSyntax(byteOffset: offset)
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private mutating func parseNumber() throws(MalformedDraftProblem) -> String {
        let start = offset
        if try peek() == UInt8(ascii: "-") { offset += 1 }
        if try peek() == UInt8(ascii: "0") {
            offset += 1
        } else {
            try skipDigits()
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            try skipDigits()
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            try skipDigits()
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    /// Steps over one or more decimal digits.
    private mutating func skipDigits() throws(MalformedDraftProblem) {
        guard Self.isDigit(try peek()) else { throw .invalidSyntax(byteOffset: offset) }
        while offset < bytes.count, Self.isDigit(bytes[offset]) {
            offset += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private mutating func expect(_ literal: String) throws(MalformedDraftProblem) {
        for byte in literal.utf8 {
            guard try peek() == byte else { throw .invalidSyntax(byteOffset: offset) }
            offset += 1
        }
    }

    private func peek() throws(MalformedDraftProblem) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        return bytes[offset]
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) {
            offset += 1
        }
    }
}
