/// A field of ``SaveDraft`` that a ``SaveViolation`` names.
public enum RequestField: Sendable, Hashable, CustomStringConvertible {
    /// ``SaveDraft/operationScope``.
    case operationScope
    /// ``SaveDraft/operationID``.
    case operationID
    /// ``SaveDraft/draftID``.
    case draftID
    /// A part of ``SaveRequest/key``, counted from 0.
    case keyPart(index: Int)
    /// ``DraftContent/title``.
    case title
    /// ``DraftContent/body``.
    case body
    /// One of ``DraftContent/tags``, counted from 0.
    case tag(index: Int)

    /// The field's name as messages spell it.
    public var description: String {
        switch self {
        case .operationScope: "operation scope"
        case .operationID: "operation ID"
        case .draftID: "draft ID"
        case .keyPart(let index): "key part \(index)"
        case .title: "title"
        case .body: "body"
        case .tag(let index): "tag \(index)"
        }
    }
}
