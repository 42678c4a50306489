/// A table lock mode of PostgreSQL's, weakest first, as `pg_locks.mode` names it.
public enum LockMode: Int, Sendable, Hashable, Comparable, CaseIterable, Codable, CustomStringConvertible {
    case accessShare = 1
    case rowShare
    case rowExclusive
    case shareUpdateExclusive
    case share
    case shareRowExclusive
    case exclusive
    case accessExclusive

    /// The mode `pg_locks.mode` names (`AccessShareLock` … `AccessExclusiveLock`); nil for a
    /// mode that is not a table lock's.
    public init?(pgLocksMode: String) {
        guard let mode = Self.allCases.first(where: { $0.pgLocksMode == pgLocksMode }) else { return nil }
        self = mode
    }

    /// The name `pg_locks.mode` gives it.
    public var pgLocksMode: String {
        switch self {
        case .accessShare: "AccessShareLock"
        case .rowShare: "RowShareLock"
        case .rowExclusive: "RowExclusiveLock"
        case .shareUpdateExclusive: "ShareUpdateExclusiveLock"
        case .share: "ShareLock"
        case .shareRowExclusive: "ShareRowExclusiveLock"
        case .exclusive: "ExclusiveLock"
        case .accessExclusive: "AccessExclusiveLock"
        }
    }

    /// The name the documentation gives it: `ACCESS EXCLUSIVE`.
    public var description: String {
        switch self {
        case .accessShare: "ACCESS SHARE"
        case .rowShare: "ROW SHARE"
        case .rowExclusive: "ROW EXCLUSIVE"
        case .shareUpdateExclusive: "SHARE UPDATE EXCLUSIVE"
        case .share: "SHARE"
        case .shareRowExclusive: "SHARE ROW EXCLUSIVE"
        case .exclusive: "EXCLUSIVE"
        case .accessExclusive: "ACCESS EXCLUSIVE"
        }
    }

    /// Whether an application's `INSERT`, `UPDATE` and `DELETE` (ROW EXCLUSIVE) wait for it.
    public var blocksWrites: Bool { self >= .share }
    /// Whether an application's `SELECT` (ACCESS SHARE) waits for it.
    public var blocksReads: Bool { self == .accessExclusive }

    public static func < (lhs: LockMode, rhs: LockMode) -> Bool { lhs.rawValue < rhs.rawValue }
}
