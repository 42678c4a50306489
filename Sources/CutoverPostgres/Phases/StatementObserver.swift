import PostgresClient

/// Watches each statement of a plan's files as ``SQLFileRunner`` runs it: how a rehearsal sees
/// the locks, rewrites, time and WAL of every statement.
///
/// With an observer, a file runs one statement at a time (split by ``SQLStatements``) instead
/// of as one text, in the same transaction; the observer's own queries on that connection only
/// read. A runner without one (every real step) sends each file whole.
public protocol StatementObserver: AnyObject, Sendable {
    /// `file` of `step` is about to run, in a transaction or not.
    func fileStarts(_ file: String, step: String, isInTransaction: Bool)
    /// `statement` is about to run on `connection` (inside the file's transaction, or on the
    /// file's own session outside one).
    func statementStarts(_ statement: String, on connection: PostgresConnection) throws
    /// `statement` ended on `connection`, with `error` when it failed (the transaction is then
    /// aborted, and `connection` takes no query until it ends).
    func statementEnded(_ statement: String, on connection: PostgresConnection, error: (any Error)?) throws
    /// The file's transaction committed (or, outside one, the file ended).
    func fileEnded(isCommitted: Bool)
}
