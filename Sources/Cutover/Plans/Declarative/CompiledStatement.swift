/// One statement the compiler generated, with the lock it takes on the plan's table and what it
/// does to the table's rows, for `phase plan` to show before anything runs.
public struct CompiledStatement: Sendable, Hashable, CustomStringConvertible {
    /// The statement's SQL, without a trailing `;`.
    public let sql: String
    /// The strongest lock it takes on the plan's table; nil when it takes none there.
    public let lock: TableLock?
    /// What it does to the table's rows.
    public let work: TableWork
    /// Anything else it locks or waits for, such as a referenced table; nil when nothing.
    public let note: String?

    init(_ sql: String, lock: TableLock?, work: TableWork, note: String? = nil) {
        self.sql = sql
        self.lock = lock
        self.work = work
        self.note = note
    }

    /// Whether it rewrites the table; no statement the compiler generates does, by design.
    public var rewritesTable: Bool { work == .rewrite }

    /// One line: `ACCESS EXCLUSIVE, catalog only, no rewrite`.
    public var description: String {
        let lockText = lock.map { "\($0.rawValue) lock" } ?? "no lock on the table"
        return [lockText, work.description, rewritesTable ? nil : "no rewrite", note].compactMap { $0 }.joined(separator: ", ")
    }
}

/// PostgreSQL's table lock modes, weakest first; raw values are PostgreSQL's names.
public enum TableLock: String, Sendable, Hashable, CaseIterable {
    /// Taken by SELECT; conflicts only with ACCESS EXCLUSIVE.
    case accessShare = "ACCESS SHARE"
    /// Taken by SELECT … FOR UPDATE.
    case rowShare = "ROW SHARE"
    /// Taken by INSERT, UPDATE, DELETE.
    case rowExclusive = "ROW EXCLUSIVE"
    /// Taken by CREATE INDEX CONCURRENTLY and VALIDATE CONSTRAINT: reads and writes go on.
    case shareUpdateExclusive = "SHARE UPDATE EXCLUSIVE"
    /// Taken by CREATE INDEX: blocks writes.
    case share = "SHARE"
    /// Taken by CREATE TRIGGER and ADD FOREIGN KEY: blocks writes, briefly here.
    case shareRowExclusive = "SHARE ROW EXCLUSIVE"
    /// Taken by REFRESH MATERIALIZED VIEW CONCURRENTLY.
    case exclusive = "EXCLUSIVE"
    /// Taken by most ALTER TABLE forms: blocks reads and writes, briefly here (catalog only).
    case accessExclusive = "ACCESS EXCLUSIVE"
}

/// What a statement does to its table's rows.
public enum TableWork: Sendable, Hashable, CustomStringConvertible {
    /// It changes the catalog only; its lock is held for an instant.
    case catalog
    /// It reads every row (an index build, a validation), under a lock that lets writes go on.
    case scan
    /// It reads a sample of the table's pages, a few hundred whatever its size.
    case sample
    /// It writes some rows, as an application's statement does.
    case rows
    /// It rewrites the whole table under its lock.
    case rewrite

    /// `catalog only`, `scans the table`, `reads a sample of the table`, `writes rows`, `rewrites the table`.
    public var description: String {
        switch self {
        case .catalog: "catalog only"
        case .scan: "scans the table"
        case .sample: "reads a sample of the table"
        case .rows: "writes rows"
        case .rewrite: "rewrites the table"
        }
    }
}
