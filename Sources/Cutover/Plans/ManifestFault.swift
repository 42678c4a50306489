/// A manifest problem and where it is, before ``MigrationPlan/init(manifest:file:)`` names the file.
struct ManifestFault: Error, Sendable, Hashable {
    /// Where the problem is.
    let field: ManifestPath
    /// What the problem is.
    let problem: PlanManifestProblem
}
