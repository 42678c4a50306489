extension PostgresConfiguration {
    /// How a connection sends statements with parameters (``PostgresConnection/query(_:)``,
    /// pipelined transactions, everything the store runs).
    ///
    /// A connection pooler in transaction or statement mode (PgBouncer before 1.21, or later
    /// without `max_prepared_statements`) hands each transaction to whichever server connection
    /// is free, so a statement prepared by one client may be missing, or be another client's
    /// under the same name, in the next. Unnamed statements leave nothing behind on the server
    /// and work through any pooler; prepared ones save the server a parse per statement.
    public enum PreparedStatements: Sendable, Equatable, CustomStringConvertible {
        /// Each statement is parsed, bound and run in one go as the protocol's unnamed
        /// statement, so that nothing outlives it on the server connection. The default: safe
        /// on a direct connection and through every pooler.
        case unnamed
        /// Each statement is prepared once per connection, under a name no other connection
        /// uses, and run by name afterwards (at most 256 per connection; past that, unnamed).
        /// Only for a direct connection, a pooler in session mode, or a pooler that keeps
        /// protocol-level prepared statements per client (PgBouncer 1.21 or later with
        /// `max_prepared_statements` above 0).
        case perConnection

        public var description: String {
            switch self {
            case .unnamed: "unnamed"
            case .perConnection: "perConnection"
            }
        }
    }
}
