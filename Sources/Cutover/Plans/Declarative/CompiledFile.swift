/// One SQL file the compiler generated: its path in the plan, how it runs, and its statements.
public struct CompiledFile: Sendable, Hashable {
    /// Its path, under `compiled/`.
    public let path: String
    /// What the file is for, as its header comment says.
    public let purpose: String
    /// Its statements, in order.
    public let statements: [CompiledStatement]
    /// Whether it runs in a transaction of its own (false for `CONCURRENTLY`).
    public let runsInTransaction: Bool
    /// The servers it runs on; nil for every server.
    public let serverVersion: ServerVersionRange?

    init(_ path: String, purpose: String, statements: [CompiledStatement], runsInTransaction: Bool = true,
         serverVersion: ServerVersionRange? = nil) {
        self.path = path
        self.purpose = purpose
        self.statements = statements
        self.runsInTransaction = runsInTransaction
        self.serverVersion = serverVersion
    }

    /// The file as a plan step names it.
    public var planFile: PlanSQLFile {
        PlanSQLFile(path: path, runsInTransaction: runsInTransaction, serverVersion: serverVersion)
    }

    /// The file's text: a header comment, then each statement and its lock as a comment.
    public var text: String {
        let header = purpose.split(separator: "\n", omittingEmptySubsequences: false).map { "-- \($0)" }
        let body = statements.map { "-- \($0.description)\n\($0.sql);" }
        return (header + [""] + [body.joined(separator: "\n\n")]).joined(separator: "\n") + "\n"
    }
}
