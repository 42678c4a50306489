/// Why a stored draft could not be read: an unknown format, or malformed data.
///
/// Descriptions name the draft, the format and the problem, never the stored content.
public enum DraftDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The draft is stored in a format this reader does not know (a newer writer's, say).
    case unsupportedFormat(DraftFormat, draftID: String, supported: [DraftFormat])

    /// The draft's bytes are not valid in the format its marker names.
    case malformed(draftID: String, format: DraftFormat, problem: MalformedDraftProblem)

    /// One line naming the draft and what is wrong.
    public var description: String {
        switch self {
        case .unsupportedFormat(let format, let draftID, let supported):
            let names = supported.map(\.rawValue).joined(separator: ", ")
            return "draft \(String(reflecting: draftID)) is stored in format "
                + "\(String(reflecting: format.rawValue)), which this reader cannot read; supported formats: \(names)"
        case .malformed(let draftID, let format, let problem):
            return "draft \(String(reflecting: draftID)) has malformed \(format) data: \(problem)"
        }
    }
}
