import Cutover

/// Generates drafts and requests whose text mixes the characters that break codecs:
/// quotes, backslashes, controls, combining marks, astral scalars, separators and non-characters.
struct DraftGenerator {
    private static let awkwardScalars: [Unicode.Scalar] = [
        "\"", "\\", "/", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}", "\u{1F}", "\u{7F}",
        "\u{E9}", "\u{301}", "\u{4E2D}", "\u{1F680}", "\u{1F44D}", "\u{1F3FD}", "\u{2028}", "\u{FEFF}",
        "\u{FFFF}", "\u{D7FF}", "\u{E000}", "\u{10FFFF}",
    ]

    private var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    /// Text of `length` scalars drawn from `length`; never NUL, which saves refuse.
    mutating func text(length: ClosedRange<Int>) -> String {
        let count = Int.random(in: length, using: &random)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<count {
            if Bool.random(using: &random) {
                scalars.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
            } else {
                scalars.append(Self.awkwardScalars.randomElement(using: &random)!)
            }
        }
        return String(scalars)
    }

    /// Content within the save limits: a title of 1 to 40 scalars, a body of up to 200, up to 5 tags.
    mutating func content() -> DraftContent {
        let tagCount = Int.random(in: 0...5, using: &random)
        return DraftContent(
            title: text(length: 1...40),
            body: text(length: 0...200),
            tags: (0..<tagCount).map { _ in text(length: 1...10) })
    }

    /// A valid request with short identifiers, so that generated requests sometimes coincide in a field.
    mutating func request() -> SaveDraft {
        SaveDraft(
            operationScope: text(length: 1...3),
            operationID: text(length: 1...3),
            draftID: text(length: 1...3),
            expectedRevision: Int64.random(in: 0...3, using: &random),
            content: DraftContent(
                title: text(length: 1...3),
                body: text(length: 0...3),
                tags: (0..<Int.random(in: 0...2, using: &random)).map { _ in text(length: 1...2) }))
    }

    /// A number in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }
}

extension DraftContent {
    /// Every text field as its exact UTF-8 bytes: equality that Unicode normalisation cannot blur.
    var exactBytes: [[UInt8]] {
        [Array(title.utf8), Array(body.utf8)] + tags.map { Array($0.utf8) }
    }
}
