extension EncodedDraft {
    /// What a store keeps after `write` lands on a draft stored as `existing` (nil: a new draft).
    ///
    /// - A v1 write onto a v2 draft merges: the title is replaced and every other
    ///   member kept (``DraftCodecV2/mergingLegacyTitle(_:into:)``).
    /// - Any other write onto a v1 or v2 draft, or onto no draft, is stored as written.
    /// - A write onto a draft in a format this build does not know is refused
    ///   rather than overwriting fields it cannot see.
    /// - A write this build cannot read itself is refused, so nothing unreadable is ever stored.
    public static func stored(
        afterWriting write: EncodedDraft,
        over existing: EncodedDraft?,
        draftID: String
    ) throws(DraftDecodingError) -> EncodedDraft {
        let registry = DraftCodecRegistry.standard
        let written = try registry.decode(write, draftID: draftID)
        guard let existing else { return write }
        guard registry.supportedFormats.contains(existing.format) else {
            throw .unsupportedFormat(existing.format, draftID: draftID, supported: registry.supportedFormats)
        }
        guard write.format == .v1, existing.format == .v2 else { return write }
        do {
            let merged = try DraftCodecV2().mergingLegacyTitle(written.title, into: existing.bytes)
            return EncodedDraft(format: .v2, bytes: merged)
        } catch {
            throw .malformed(draftID: draftID, format: .v2, problem: error)
        }
    }
}
