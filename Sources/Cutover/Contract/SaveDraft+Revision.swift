extension SaveDraft {
    /// The revision this save commits over a draft at `current` (nil: no such draft), or why it cannot.
    ///
    /// - 0 expected and no draft: creates it at revision 1.
    /// - Above 0 expected and no draft: ``SaveFailure/notFound``.
    /// - Expected differs from current (0 expected for an existing draft included):
    ///   ``SaveFailure/conflict(expected:current:)``.
    /// - Current is `Int64.max`: ``SaveFailure/exhausted``.
    ///
    /// A store that learns of a failed conditional update (say, zero rows
    /// updated) can read the current revision and call this to name the failure.
    public func committedRevision(over current: Int64?) throws(SaveFailure) -> Int64 {
        try Self.committedRevision(expected: expectedRevision, over: current)
    }

    /// The revision a save expecting `expectedRevision` commits over `current`; shared by every request type.
    static func committedRevision(expected expectedRevision: Int64, over current: Int64?) throws(SaveFailure) -> Int64 {
        guard let current else {
            guard expectedRevision == 0 else { throw .notFound }
            return 1
        }
        guard expectedRevision == current else {
            throw .conflict(expected: expectedRevision, current: current)
        }
        guard current < Int64.max else { throw .exhausted }
        return current + 1
    }
}
