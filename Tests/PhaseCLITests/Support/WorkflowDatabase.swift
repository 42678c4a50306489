import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// A database holding the legacy `drafts` table with seeded rows, for running `phase` on.
struct WorkflowDatabase: Sendable {
    let database: TestDatabase

    var url: String { database.connectionString }

    /// Seeds `rows` legacy drafts in `database`, or in a new database of the test server.
    static func make(_ label: String, rows: Int = 200, in given: TestDatabase? = nil) async throws -> WorkflowDatabase {
        let database = if let given { given } else { try await TestPostgres.database(label) }
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try connection.query("""
                INSERT INTO drafts (id, title, revision) SELECT 'seed-' || lpad(n::text, 6, '0'), 'Seed ' || n, 1
                  FROM generate_series(1, \(rows)) AS n
                """)
        }
        return WorkflowDatabase(database: database)
    }

    /// Runs `phase` against this database.
    func phase(_ arguments: String...) async throws -> PhaseBinary.Run {
        try await phase(arguments)
    }

    func phase(_ arguments: [String]) async throws -> PhaseBinary.Run {
        let url = url
        return try await onThread { try PhaseBinary.run(arguments, databaseURL: url) }
    }

    /// Runs SQL on a connection of its own.
    @discardableResult
    func sql<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let database = database
        return try await onThread { try body(try database.connect(applicationName: "workflow-observer")) }
    }

    /// One value from a query.
    func value<T: PostgresDecodable>(_ type: T.Type, _ query: String) async throws -> T? {
        try await sql { try $0.query(PostgresQuery(unsafeSQL: query)).first?.decode(T?.self, at: 0) }
    }

    /// The columns `drafts` has now.
    func columns() async throws -> [String] {
        try await sql { connection in
            try connection.query("""
                SELECT attname FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                """).map { try $0.decode(String.self, "attname") }
        }
    }

    /// What an old application version does with plain SQL: insert, conditional update, select.
    /// Returns the title it reads back.
    func oldApplicationWrites(id: String, title: String) async throws -> String {
        try await sql { connection in
            try connection.query("INSERT INTO drafts (id, title, revision) VALUES (\(id), \(title), \(Int64(1)))")
            let updated = try connection.query("""
                UPDATE drafts SET title = \(title + " (edited)"), revision = revision + 1 WHERE id = \(id) AND revision = \(Int64(1))
                """).affectedRows
            guard updated == 1 else { throw PostgresError(code: .unexpectedResponse, message: "the old application's update changed \(updated ?? -1) rows") }
            return try connection.query("SELECT title FROM drafts WHERE id = \(id)")[0].decode(String.self, "title")
        }
    }

    /// The phase the plan named `plan` is in.
    func phaseName(plan: String = "drafts") async throws -> String? {
        try await sql { try $0.query("SELECT phase FROM cutover.migration_state WHERE plan = \(plan)").first?.decode(String.self, "phase") }
    }
}
