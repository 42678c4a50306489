/// One SQL file a plan step runs, named relative to the plan folder.
///
/// In a manifest, `"expand.sql"` runs in its own transaction;
/// `{"file": "expand_index.sql", "transaction": false}` runs outside one, as
/// `CREATE INDEX CONCURRENTLY` requires.
public struct PlanSQLFile: Sendable, Hashable {
    /// The path inside the plan folder: `/`-separated, of `A-Z a-z 0-9 _ . / -`, ending in `.sql`.
    public let path: String

    /// Whether the file runs inside its own transaction; false only when the manifest says `"transaction": false`.
    public let runsInTransaction: Bool

    init(path: String, runsInTransaction: Bool = true) {
        self.path = path
        self.runsInTransaction = runsInTransaction
    }

    /// What is wrong with `path` as a SQL file's path in a plan folder, or nil when nothing is.
    ///
    /// The length is checked first, then backslashes, then the character set,
    /// then the absolute form, then each component, then the `.sql` ending, so
    /// the first problem reported is the most telling one.
    static func problem(with path: String) -> PlanManifestProblem? {
        let length = path.unicodeScalars.count
        guard PlanLimits.pathLength.contains(length) else {
            return .lengthOutOfRange(found: length, allowed: PlanLimits.pathLength, unit: .characters)
        }
        if path.unicodeScalars.contains("\\") { return .invalidPath(path, .backslash) }
        if let scalar = path.unicodeScalars.first(where: { !isAllowed($0) }) {
            return .invalidPath(path, .forbiddenCharacter(scalar))
        }
        if path.hasPrefix("/") { return .invalidPath(path, .absolute) }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if components.contains("..") { return .invalidPath(path, .parentComponent) }
        if components.contains(where: { $0.isEmpty || $0 == "." }) { return .invalidPath(path, .emptyComponent) }
        guard let name = components.last, name.hasSuffix(".sql"), name.count > ".sql".count else {
            return .invalidPath(path, .notSQLFile)
        }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", ".", "/", "-": true
        default: false
        }
    }
}
