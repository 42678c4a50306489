import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The client through a real PgBouncer in transaction mode, where each transaction may run
/// on another server connection, and each server connection serves many clients in turn.
@Suite("Through PgBouncer in transaction mode")
struct TransactionPoolerTests {
    @Test(.timeLimit(.minutes(3)))
    func whatTheClientRunsLeavesNothingOnTheSharedServerConnection() async throws {
        let database = try await TestPostgres.database("pooler_leftovers")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        let pool = PostgresPool(configuration: .init(connectionString: url, applicationName: "library"), maximumConnections: 4)
        try await pool.withConnection { connection in
            try connection.query("CREATE TABLE items (n int PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())")
            try connection.query("INSERT INTO items (n) VALUES (\(1))")
            _ = try connection.query("SELECT at FROM items WHERE n = \(1)")[0].decode(Date.self, "at")
            try connection.withTransaction { try $0.query("INSERT INTO items (n) VALUES (\(2))") }
        }
        _ = try await pool.pipelinedTransaction("INSERT INTO items (n) VALUES (\(3)) RETURNING n")
        await pool.shutdown()
        let leftovers = try await onThread { try SessionLeftovers.probe(through: url) }
        #expect(leftovers == .none)
    }

    @Test(.timeLimit(.minutes(3)))
    func theProbeSeesWhatACarelessClientLeavesBehind() async throws {
        // The judge of the test above: a client that does leave state behind is caught.
        let database = try await TestPostgres.database("pooler_probe")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        let leftovers = try await onThread {
            var configuration = PostgresConfiguration(connectionString: url)
            configuration.preparedStatements = .perConnection
            let careless = try PostgresConnection(configuration: configuration)
            try careless.execute(unsafeSQL: "SET lock_timeout = '1s'; LISTEN careless; SELECT pg_advisory_lock(17)")
            try careless.query("SELECT \(1)::int AS n")
            return try SessionLeftovers.probe(through: url)
        }
        #expect(leftovers.settings == ["lock_timeout"])
        #expect(leftovers.preparedStatements.count == 1)
        #expect(leftovers.listeningChannels == ["careless"])
        #expect(leftovers.advisoryLocks == 1)
    }

    @Test(.timeLimit(.minutes(3)))
    func manyClientsThroughTwoServerConnectionsGetTheirOwnStatementsAnswered() async throws {
        let database = try await TestPostgres.database("pooler_statements")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 2))
        defer { pooler.stop() }
        try await onThread {
            try PostgresConnection(configuration: .init(connectionString: url))
                .execute(unsafeSQL: "CREATE TABLE entries (client int, round int, PRIMARY KEY (client, round))")
        }
        let clients = 12, rounds = 15
        // Each client its own pool, so that every one opens its own connection to PgBouncer;
        // statements of the same parameter count and different meaning, which a statement
        // run under another's name would answer wrongly.
        let mismatches = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<clients {
                group.addTask {
                    let pool = PostgresPool(configuration: .init(connectionString: url), maximumConnections: 1)
                    var wrong: [String] = []
                    for round in 0..<rounds {
                        let sum = try await pool.withConnection {
                            try $0.query("SELECT \(client)::int + \(round)::int AS v")[0].decode(Int.self, "v")
                        }
                        let product = try await pool.withConnection {
                            try $0.query("SELECT \(client)::int * 1000 + \(round)::int * 7 AS v")[0].decode(Int.self, "v")
                        }
                        let inserted = try await pool.pipelinedTransaction(
                            "INSERT INTO entries VALUES (\(client), \(round)) RETURNING client * 100 + round AS v")[0]
                            .decode(Int.self, "v")
                        if sum != client + round { wrong.append("sum \(client)+\(round) = \(sum)") }
                        if product != client * 1000 + round * 7 { wrong.append("product of \(client), \(round) = \(product)") }
                        if inserted != client * 100 + round { wrong.append("insert \(client), \(round) returned \(inserted)") }
                    }
                    await pool.shutdown()
                    return wrong
                }
            }
            var all: [String] = []
            for try await wrong in group { all += wrong }
            return all
        }
        #expect(mismatches == [])
        let (count, servers) = try await onThread {
            let direct = try database.connect()
            let count = try direct.query("SELECT count(*) AS n FROM entries")[0].decode(Int.self, "n")
            let servers = try direct.query("""
                SELECT count(*) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                """)[0].decode(Int.self, "n")
            return (count, servers)
        }
        #expect(count == clients * rounds)
        // The clients really shared: PgBouncer never opened more than its pool.
        #expect(servers <= 2)
    }

    @Test(.timeLimit(.minutes(3)))
    func statementsPreparedPerConnectionNeverRunAnotherClientsStatement() async throws {
        // Prepared statements through a pooler that does not track them are a misconfiguration,
        // but names unique to each connection make it fail loudly rather than run the wrong
        // statement: with one server connection, both clients' statements live side by side.
        let database = try await TestPostgres.database("pooler_named")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        let answers = try await onThread {
            var configuration = PostgresConfiguration(connectionString: url)
            configuration.preparedStatements = .perConnection
            let one = try PostgresConnection(configuration: configuration)
            let two = try PostgresConnection(configuration: configuration)
            return try (0..<3).flatMap { round in
                [try one.query("SELECT \(round)::int + 1 AS v")[0].decode(Int.self, "v"),
                 try two.query("SELECT \(round)::int * 10 AS v")[0].decode(Int.self, "v")]
            }
        }
        #expect(answers == [1, 0, 2, 10, 3, 20])
    }

    @Test(.timeLimit(.minutes(3)))
    func timestampsDecodeOnAServerSetToAnotherDateStyle() async throws {
        let database = try await TestPostgres.database("pooler_datestyle")
        try await onThread {
            let direct = try database.connect()
            try direct.execute(unsafeSQL: "ALTER DATABASE \(try direct.quoteIdentifier(database.name)) SET DateStyle = 'SQL, DMY'")
        }
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        let expected = Date(timeIntervalSince1970: 1_764_590_400.25)
        for connectionString in [database.connectionString, url] {
            let (decoded, style) = try await onThread {
                let connection = try PostgresConnection(configuration: .init(connectionString: connectionString))
                let row = try connection.query("SELECT \(expected)::timestamptz AS at, current_setting('DateStyle') AS style")[0]
                return (try row.decode(Date.self, "at"), try row.decode(String.self, "style"))
            }
            #expect(abs(decoded.timeIntervalSince(expected)) < 0.000_001)
            #expect(style == "ISO, MDY")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func sessionSettingsAreRefusedByPgBouncerSoTheDefaultsSendNone() async throws {
        // What the pooler runbook says: settings in the `options` start-up parameter do not
        // pass PgBouncer, and the defaults send none.
        let database = try await TestPostgres.database("pooler_options")
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        let (refusal, connected) = try await onThread { () -> (String?, Bool) in
            var configuration = PostgresConfiguration(connectionString: url)
            configuration.sessionSettings = ["statement_timeout": "5s"]
            var refusal: String?
            do { _ = try PostgresConnection(configuration: configuration) } catch let error as PostgresError {
                refusal = error.message
            }
            return (refusal, try PostgresConnection(configuration: .init(connectionString: url)).isConnected)
        }
        #expect(refusal?.contains("unsupported startup parameter: options") == true)
        #expect(connected)
    }

    @Test(.timeLimit(.minutes(3)))
    func aServerConnectionThatDiesInCommitLeavesTheOutcomeUnknown() async throws {
        // The server's session ends while it commits (a deferred trigger terminates it): what
        // PgBouncer passes on must read as "may have committed", never as a definite failure.
        let database = try await TestPostgres.database("pooler_commit_dies")
        try await onThread {
            try database.connect().execute(unsafeSQL: """
                CREATE TABLE items (n int);
                CREATE FUNCTION end_session() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); RETURN NULL; END $$;
                CREATE CONSTRAINT TRIGGER dies_at_commit AFTER INSERT ON items DEFERRABLE INITIALLY DEFERRED
                    FOR EACH ROW EXECUTE FUNCTION end_session();
                """)
        }
        let (pooler, url) = try await database.throughPgBouncer(.init(poolSize: 1))
        defer { pooler.stop() }
        for connectionString in [database.connectionString, url] {
            let pool = PostgresPool(configuration: .init(connectionString: connectionString), maximumConnections: 1)
            let failure = await #expect(throws: PostgresError.self) {
                try await pool.pipelinedTransaction("INSERT INTO items VALUES (\(1))")
            }
            #expect(failure?.code == .outcomeUnknown, "\(failure.map(String.init(describing:)) ?? "no error")")
            await pool.shutdown()
        }
    }
}
