/// Reads stored drafts of any supported format, choosing the decoder by the stored format marker.
///
/// ```swift
/// let content = try DraftCodecRegistry.standard.decode(stored, draftID: "draft-1")
/// ```
///
/// A v1 draft reads with the default body and tags; a marker with no decoder
/// is ``DraftDecodingError/unsupportedFormat(_:draftID:supported:)``, never a
/// guess.
public struct DraftCodecRegistry: Sendable {
    /// The registry of this build: v1 and v2.
    public static let standard = DraftCodecRegistry(decoders: [DraftCodecV1(), DraftCodecV2()])

    private let decoders: [DraftFormat: any DraftDecoder]

    /// A registry of the given decoders; a later decoder for the same format replaces an earlier one.
    public init(decoders: [any DraftDecoder]) {
        var byFormat: [DraftFormat: any DraftDecoder] = [:]
        for decoder in decoders {
            byFormat[decoder.format] = decoder
        }
        self.decoders = byFormat
    }

    /// The formats this registry reads, in marker order.
    public var supportedFormats: [DraftFormat] {
        decoders.keys.sorted()
    }

    /// The content of a stored draft, as a new reader sees it.
    public func decode(_ stored: EncodedDraft, draftID: String) throws(DraftDecodingError) -> DraftContent {
        guard let decoder = decoders[stored.format] else {
            throw .unsupportedFormat(stored.format, draftID: draftID, supported: supportedFormats)
        }
        do {
            return try decoder.decode(stored.bytes)
        } catch {
            throw .malformed(draftID: draftID, format: stored.format, problem: error)
        }
    }

    /// The v1 representation of a stored draft: what a reader that only knows v1 reads.
    ///
    /// For a v2 draft this is its title as v1 bytes, the value the expand phase
    /// mirrors into the legacy `title` column.
    public func legacyRepresentation(of stored: EncodedDraft, draftID: String) throws(DraftDecodingError) -> EncodedDraft {
        DraftCodecV1().encode(try decode(stored, draftID: draftID))
    }
}
