/// The modern format, v2: a canonical JSON document carrying title, body, tags and its version.
///
/// The exact bytes for `DraftContent(title: "Plan", body: "", tags: ["a"])`:
///
/// ```json
/// {"body":"","tags":["a"],"title":"Plan","version":2}
/// ```
///
/// Members are sorted by name, there is no whitespace, strings escape only `"`,
/// `\` and controls below U+0020 (`\b \t \n \f \r`, otherwise `\u00xx`), and
/// everything else is raw UTF-8.
///
/// Reading is tolerant where it is safe: whitespace and member order do not
/// matter, and members this version does not know are ignored by
/// ``decode(_:)`` and kept by ``mergingLegacyTitle(_:into:)``. It is strict where
/// it is not: `version` must be exactly `2`, and `title`, `body` and `tags` must
/// be present with the right types.
public struct DraftCodecV2: DraftEncoder, DraftDecoder {
    /// The value of the document's `version` member.
    public static let version = 2

    /// Creates the codec; it has no settings.
    public init() {}

    /// ``DraftFormat/v2``.
    public var format: DraftFormat { .v2 }

    /// The canonical v2 document for `content`.
    public func encode(_ content: DraftContent) -> EncodedDraft {
        // Written straight out, members already in the canonical order (the UTF-8 order of their
        // names), with the writer's own string escaping: the same bytes as the writer gives for
        // the document as a value, without building that value first (every save encodes one).
        // The members' text plus their names and punctuation, so that the bytes rarely grow.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + content.title.utf8.count + content.body.utf8.count
                              + content.tags.reduce(0) { $0 + $1.utf8.count + 3 })
        bytes.append(contentsOf: #"{"body":"#.utf8)
        JSONWriter.writeString(content.body, to: &bytes)
        bytes.append(contentsOf: #","tags":["#.utf8)
        for (index, tag) in content.tags.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(tag, to: &bytes)
        }
        bytes.append(contentsOf: #"],"title":"#.utf8)
        JSONWriter.writeString(content.title, to: &bytes)
        bytes.append(contentsOf: #","version":"#.utf8)
        bytes.append(contentsOf: String(Self.version).utf8)
        bytes.append(UInt8(ascii: "}"))
        return EncodedDraft(format: .v2, bytes: bytes, encodedFrom: content)
    }

    /// The content of a v2 document.
    public func decode(_ bytes: [UInt8]) throws(MalformedDraftProblem) -> DraftContent {
        try Self.content(of: Self.members(of: bytes))
    }

    /// The v2 document that a legacy write of `title` leaves: the title replaced, every other member kept.
    ///
    /// This is the one definition of a v1 write landing on a v2 draft, so a
    /// rollback to the legacy writer loses nothing. The document must be valid
    /// v2; the result is canonical.
    public func mergingLegacyTitle(_ title: String, into document: [UInt8]) throws(MalformedDraftProblem) -> [UInt8] {
        var members = try Self.members(of: document)
        _ = try Self.content(of: members)
        for index in members.indices where members[index].name == "title" {
            members[index].value = .string(title)
        }
        return JSONWriter.bytes(of: .object(members))
    }

    private static func members(of bytes: [UInt8]) throws(MalformedDraftProblem) -> [JSONMember] {
        let document = try JSONParser.parse(bytes)
        guard case .object(let members) = document else {
            throw .wrongType(field: "document", expected: .object, found: document.kind)
        }
        return members
    }

    private static func content(of members: [JSONMember]) throws(MalformedDraftProblem) -> DraftContent {
        func member(_ name: String) throws(MalformedDraftProblem) -> JSONValue {
            guard let found = members.first(where: { $0.name == name }) else { throw .missingField(name) }
            return found.value
        }
        func text(_ value: JSONValue, field: String) throws(MalformedDraftProblem) -> String {
            guard case .string(let text) = value else {
                throw .wrongType(field: field, expected: .string, found: value.kind)
            }
            return text
        }

        let version = try member("version")
        guard case .number(let literal) = version else {
            throw .wrongType(field: "version", expected: .number, found: version.kind)
        }
        guard literal == String(Self.version) else {
            throw .unexpectedVersion(found: String(literal.prefix(20)))
        }
        let title = try text(member("title"), field: "title")
        let body = try text(member("body"), field: "body")
        let tagList = try member("tags")
        guard case .array(let elements) = tagList else {
            throw .wrongType(field: "tags", expected: .array, found: tagList.kind)
        }
        var tags: [String] = []
        for (index, element) in elements.enumerated() {
            tags.append(try text(element, field: "tags[\(index)]"))
        }
        return DraftContent(title: title, body: body, tags: tags)
    }
}
