/// Reads one format's stored bytes back into content.
public protocol DraftDecoder: Sendable {
    /// The format this decoder reads.
    var format: DraftFormat { get }

    /// The content `bytes` hold; fields the format lacks get the documented defaults.
    ///
    /// Throws the problem alone; ``DraftCodecRegistry`` adds the draft and the format.
    func decode(_ bytes: [UInt8]) throws(MalformedDraftProblem) -> DraftContent
}
