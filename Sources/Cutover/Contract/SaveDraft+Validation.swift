extension SaveDraft {
    /// The first limit this request breaks, or nil when every store may try it.
    ///
    /// Fields are checked in declaration order (scope, operation ID, draft ID,
    /// expected revision, title, body, tags); within a field: empty, too long, NUL.
    public var violation: SaveViolation? {
        if let broken = Self.check(operationScope, .operationScope, SaveLimits.operationScopeLength)
            ?? Self.check(operationID, .operationID, SaveLimits.operationIDLength)
            ?? Self.check(draftID, .draftID, SaveLimits.draftIDLength) {
            return broken
        }
        if expectedRevision < 0 { return .negativeExpectedRevision }
        return Self.violation(of: content)
    }

    /// The first limit `content` breaks: title, body, tags; shared with the drafts entity.
    static func violation(of content: DraftContent) -> SaveViolation? {
        if let broken = Self.check(content.title, .title, 1...SaveLimits.maximumTitleLength)
            ?? Self.check(content.body, .body, 0...SaveLimits.maximumBodyLength) {
            return broken
        }
        if content.tags.count > SaveLimits.maximumTagCount {
            return .tooManyTags(maximum: SaveLimits.maximumTagCount)
        }
        for (index, tag) in content.tags.enumerated() {
            if let broken = Self.check(tag, .tag(index: index), 1...SaveLimits.maximumTagLength) {
                return broken
            }
        }
        return nil
    }

    /// Throws ``SaveFailure/invalid(_:)`` if the request breaks a limit; every store calls this first.
    public func validate() throws(SaveFailure) {
        if let violation { throw .invalid(violation) }
    }

    /// The first limit `text` breaks as `field`: empty, too long, NUL; shared by every request type.
    @usableFromInline
    static func check(_ text: String, _ field: RequestField, _ length: ClosedRange<Int>) -> SaveViolation? {
        var text = text
        // One pass over the UTF-8: every scalar has exactly one byte that is not a continuation
        // byte (10xxxxxx), and a NUL scalar is the byte 0.
        let (count, hasNUL) = text.withUTF8 { bytes in
            var count = 0
            var hasNUL = false
            for byte in bytes {
                if byte & 0xC0 != 0x80 { count += 1 }
                if byte == 0 { hasNUL = true }
            }
            return (count, hasNUL)
        }
        if count == 0, length.lowerBound > 0 { return .empty(field) }
        if count > length.upperBound { return .tooLong(field, maximum: length.upperBound) }
        if hasNUL { return .containsNUL(field) }
        return nil
    }
}
