/// A `plan.json` of either format: a plan of SQL files (format 1) or a declarative plan (format 2).
///
/// A loader reads the manifest once and, for a declarative plan, compiles it:
///
/// ```swift
/// switch try PlanDocument(manifest: bytes) {
/// case .files(let plan): /* read plan.sqlFilePaths from the folder */
/// case .declarative(let declarative):
///     let compiled = try declarative.compile()
///     /* read declarative.handWrittenFilePaths; compiled.fileTexts holds the rest */
/// }
/// ```
public enum PlanDocument: Sendable, Hashable {
    /// Format 1: steps naming SQL files.
    case files(MigrationPlan)
    /// Format 2: a table and its operations.
    case declarative(DeclarativePlan)

    /// Reads and validates a manifest of either format; `file` names it in errors.
    public init(manifest: [UInt8], file: String = "plan.json") throws(PlanManifestError) {
        do {
            let root = try PlanManifestDecoder.root(from: manifest)
            switch try PlanManifestDecoder.format(of: root) {
            case PlanLimits.declarativeFormat: self = .declarative(try DeclarativePlanDecoder.plan(from: root))
            default: self = .files(try PlanManifestDecoder.plan(from: root))
            }
        } catch {
            throw PlanManifestError(file: file, field: error.field.description, problem: error.problem)
        }
    }
}
