/// Why a plan manifest was refused: the file, the field as a JSON path, and what was expected and found.
///
/// The description is one line, for example
/// `plan.json: steps[2].kind: expected one of expand, switch, backfill, contract; found "migrate"`.
/// Found values are escaped and cut short, never echoed at length.
public struct PlanManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The manifest's name as the caller gave it, usually `plan.json`.
    public let file: String

    /// Where in the document: a JSON path such as `steps[2].apply[0]`; empty for the document as a whole.
    public let field: String

    /// What is wrong there.
    public let problem: PlanManifestProblem

    /// One line: `file: field: expected …; found …`.
    public var description: String {
        field.isEmpty ? "\(file): \(problem)" : "\(file): \(field): \(problem)"
    }
}
