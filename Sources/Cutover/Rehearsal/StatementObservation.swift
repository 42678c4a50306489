/// What one statement of a plan did when a rehearsal ran it on the scratch copy of the table:
/// observed on the server, not declared.
public struct StatementObservation: Sendable, Equatable, Codable {
    /// A table lock the statement took, or made stronger, on one relation.
    public struct RelationLock: Sendable, Equatable, Codable {
        /// The relation, schema-qualified when it is not on the search path (`public.orders`).
        public var relation: String
        /// The strongest mode the statement held on it.
        public var mode: LockMode

        /// A lock on `relation` in `mode`.
        public init(relation: String, mode: LockMode) {
            self.relation = relation
            self.mode = mode
        }
    }

    /// Whose WAL ``walBytes`` counts.
    public enum WALScope: String, Sendable, Equatable, Codable {
        /// The statement's own session's, as the server counts it (`pg_stat_get_backend_wal`,
        /// PostgreSQL 18 and later, for a statement that runs outside a transaction).
        case session
        /// Everything the server inserted while the statement ran (`pg_current_wal_insert_lsn`):
        /// its own and any other session's, the live application's included.
        case serverWide = "server-wide"
    }

    /// The step that ran it, numbered from its second run on: `expand`, `revert expand`,
    /// `expand (2)`, `backfill`, …
    public var step: String
    /// The plan's file it belongs to; nil for a step that runs no file (backfill's batches are
    /// observed as one).
    public var file: String?
    /// Which transaction it ran in, counted over the rehearsal: statements of one number commit
    /// together, so a lock one of them took is held until the last of them ends.
    public var transaction: Int
    /// Whether it ran inside a transaction with the rest of its file (otherwise on a session of
    /// its own, as `CREATE INDEX CONCURRENTLY` must).
    public var isInTransaction: Bool
    /// The statement's text.
    public var statement: String
    /// The locks it took, by relation: read from `pg_locks` in its own transaction right after
    /// it, or, for a statement outside a transaction, sampled from another session while it ran.
    public var locks: [RelationLock]
    /// Whether ``locks`` were sampled while the statement ran (a lock held for less than the
    /// sampling interval may be missed) rather than read exactly.
    public var isLockSampled: Bool
    /// How long it ran on the sample, in microseconds.
    public var microseconds: Int64
    /// Rows of the table it read or wrote (`pg_stat_xact_user_tables`); nil when not known.
    public var rowsVisited: Int64?
    /// Bytes of WAL: its session's own, or all the server inserted while it ran, as ``walScope`` says.
    public var walBytes: Int64
    /// Whose WAL ``walBytes`` counts.
    public var walScope: WALScope
    /// Relations whose file it replaced (`pg_relation_filenode` changed): a rewrite.
    public var rewritten: [String]
    /// Indexes on the table it built.
    public var indexesBuilt: [String]
    /// Constraints on the table it added already validated (a `CHECK` or `FOREIGN KEY` without
    /// `NOT VALID`), so that it read every row to validate them.
    public var constraintsValidated: [String]
    /// The error it ended with, when it failed.
    public var error: String?

    /// An observation; see each property.
    public init(step: String, file: String?, transaction: Int, isInTransaction: Bool, statement: String,
                locks: [RelationLock], isLockSampled: Bool, microseconds: Int64, rowsVisited: Int64?, walBytes: Int64,
                walScope: WALScope = .serverWide, rewritten: [String] = [], indexesBuilt: [String] = [], constraintsValidated: [String] = [], error: String? = nil) {
        self.step = step
        self.file = file
        self.transaction = transaction
        self.isInTransaction = isInTransaction
        self.statement = statement
        self.locks = locks
        self.isLockSampled = isLockSampled
        self.microseconds = microseconds
        self.rowsVisited = rowsVisited
        self.walBytes = walBytes
        self.walScope = walScope
        self.rewritten = rewritten
        self.indexesBuilt = indexesBuilt
        self.constraintsValidated = constraintsValidated
        self.error = error
    }

    /// The strongest lock it took on `relation`, if any.
    public func lock(on relation: String) -> LockMode? {
        locks.filter { $0.relation == relation }.map(\.mode).max()
    }
}
