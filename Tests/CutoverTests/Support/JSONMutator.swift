import Cutover

/// Damages JSON the way a fuzzer would, from a fixed seed: truncation, flipped and inserted
/// bytes, deleted runs, JSON tokens and hostile values spliced in.
struct JSONMutator {
    private var generator: SeededGenerator

    private static let hostileStrings = [
        "", "..", "../x.sql", "/abs.sql", #"a\\b.sql"#, #"\u0000"#, String(repeating: "x", count: 3_000),
        #"\u202e"#, "migrate", "expand", "switch", "backfill", "contract", "= 0", "< 'a'", "is null", "0s", "367d",
        "1e3", "\u{E9}.sql", #"\ud83d\ude00"#, #"\ud800"#, "a//b.sql", "x.txt", "checks/ok.sql", "10m", "name",
    ]
    private static let hostileValues = [
        "0", "-1", "1e3", "1.5", "99999999999999999999", "1000001", "2", "1", "-0", "1E400", "[]", "{}", "null",
        "true", #"["a.sql"]"#, #"{"file": "a.sql"}"#, #"[{"kind": "switch"}]"#,
    ]
    private static let tokens: [[UInt8]] = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "0", "-", "e", " ", "\n", #""kind": "switch","#,
        #""x": 1,"#, #""name": "n","#,
    ].map { Array($0.utf8) } + [[0x00], [0xFF], [0xC3], [0xE2, 0x80]]

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func variant(of original: [UInt8]) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            mutate(&bytes)
        }
        return bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let position = Int.random(in: 0...bytes.count, using: &generator)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            bytes = Array(bytes[..<position])
        case 1 where position < bytes.count:
            bytes[position] = UInt8.random(in: 0...255, using: &generator)
        case 2:
            bytes.insert(contentsOf: Self.tokens.randomElement(using: &generator) ?? [], at: position)
        case 3:
            bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...20, using: &generator)))
        case 4, 5:
            replaceString(in: &bytes, keepingQuotes: true,
                          with: Self.hostileStrings.randomElement(using: &generator) ?? "")
        case 6:
            replaceString(in: &bytes, keepingQuotes: false,
                          with: Self.hostileValues.randomElement(using: &generator) ?? "")
        default:
            let length = Int.random(in: 1...80, using: &generator)
            let copy = Array(bytes[position..<min(bytes.count, position + length)])
            bytes.insert(contentsOf: copy, at: Int.random(in: 0...bytes.count, using: &generator))
        }
    }

    /// Replaces the text of a random string literal, or the whole literal, with `replacement`.
    private mutating func replaceString(in bytes: inout [UInt8], keepingQuotes: Bool, with replacement: String) {
        let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\"") && ($0 == 0 || bytes[$0 - 1] != UInt8(ascii: "\\")) }
        let literals = stride(from: 0, to: quotes.count - 1, by: 2).map { quotes[$0]...quotes[$0 + 1] }
        guard let literal = literals.randomElement(using: &generator) else { return }
        let range = keepingQuotes ? (literal.lowerBound + 1)..<literal.upperBound : literal.lowerBound..<(literal.upperBound + 1)
        bytes.replaceSubrange(range, with: Array(replacement.utf8))
    }
}
