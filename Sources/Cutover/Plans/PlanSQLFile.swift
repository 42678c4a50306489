/// One SQL file a plan step runs, named relative to the plan folder.
///
/// In a manifest, `"expand.sql"` runs in its own transaction;
/// `{"file": "expand_index.sql", "transaction": false}` runs outside one, as
/// `CREATE INDEX CONCURRENTLY` requires; `{"file": "x.sql", "serverVersion": ">= 18"}` runs only
/// on servers of those major versions (see ``ServerVersionRange``).
public struct PlanSQLFile: Sendable, Hashable {
    /// The path inside the plan folder: `/`-separated, of `A-Z a-z 0-9 _ . / -`, ending in `.sql`.
    public let path: String

    /// Whether the file runs inside its own transaction; false only when the manifest says `"transaction": false`.
    public let runsInTransaction: Bool

    /// The server versions the file runs on; nil, when the manifest gives none, for every version.
    public let serverVersion: ServerVersionRange?

    init(path: String, runsInTransaction: Bool = true, serverVersion: ServerVersionRange? = nil) {
        self.path = path
        self.runsInTransaction = runsInTransaction
        self.serverVersion = serverVersion
    }

    /// Whether the file runs on a server of this `server_version_num` (180006 for 18.6).
    public func runs(onServerVersionNumber number: Int) -> Bool {
        serverVersion?.contains(serverVersionNumber: number) ?? true
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
