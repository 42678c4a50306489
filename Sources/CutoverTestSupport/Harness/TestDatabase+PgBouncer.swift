import PostgresClient

extension TestDatabase {
    /// A ``PgBouncerProcess`` in front of this database's server and a connection string to
    /// the database through it (the same user and password). Stop the pooler when done.
    public func throughPgBouncer(_ options: PgBouncerProcess.Options = .init()) async throws
        -> (pooler: PgBouncerProcess, connectionString: String)
    {
        let pooler = try await PgBouncerProcess.start(server: connectionString, options: options)
        return (pooler, try pooler.connectionString(for: connectionString))
    }
}
