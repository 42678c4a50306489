import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Each example plan's compiled files run in step order on a real server: expand, legacy and
/// modern writes, backfill to zero, contract's checks, contract; and expand's revert.
@Suite("The compiled examples' steps on a real server")
struct DeclarativeCycleTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let schema: String
        let legacyWrite: String
        let modernWrite: String
        /// After contract: a query whose one value must be `true`.
        let contracted: String
        /// The plan, when it is not the one of `examples/` of that name.
        var manifest: String?
        var testDescription: String { name }
    }

    static let examples = [
        Example(name: "users-description",
                schema: """
                    CREATE TABLE users (id serial PRIMARY KEY, name varchar(255) UNIQUE);
                    INSERT INTO users (name) SELECT 'user ' || n FROM generate_series(1, 7) AS n
                    """,
                legacyWrite: "INSERT INTO users (name) VALUES ('old writer')",
                modernWrite: "INSERT INTO users (name, description) VALUES ('new writer', 'written by the new application')",
                contracted: """
                    SELECT bool_and(description = CASE name WHEN 'new writer' THEN 'written by the new application'
                                                            ELSE 'description for ' || name END)
                           AND (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'users'::regclass AND attname = 'description')
                      FROM users
                    """),
        Example(name: "orders-status-code",
                schema: """
                    CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                    INSERT INTO orders SELECT n, (ARRAY['new', 'paid', 'shipped'])[1 + n % 3] FROM generate_series(1, 7) AS n
                    """,
                legacyWrite: "INSERT INTO orders (id, status) VALUES (100, 'shipped')",
                modernWrite: "INSERT INTO orders (id, status_code) VALUES (101, 2)",
                contracted: """
                    SELECT bool_and(status_code = CASE id WHEN 100 THEN 3 WHEN 101 THEN 2 ELSE 1 + id % 3 END)
                           AND NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'status' AND NOT attisdropped)
                           AND (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'status_code')
                      FROM orders
                    """),
        Example(name: "split-name, a composite key",
                schema: """
                    CREATE TABLE people (tenant_id bigint, id bigint, full_name text NOT NULL, PRIMARY KEY (tenant_id, id));
                    INSERT INTO people SELECT n % 3, n, 'First' || n || ' Last' || n FROM generate_series(1, 8) AS n
                    """,
                legacyWrite: "INSERT INTO people (tenant_id, id, full_name) VALUES (9, 1, 'Ada Lovelace')",
                modernWrite: "INSERT INTO people (tenant_id, id, first_name, last_name) VALUES (9, 2, 'Grace', 'Hopper')",
                contracted: """
                    SELECT bool_and(first_name || ' ' || last_name = CASE WHEN tenant_id = 9 AND id = 1 THEN 'Ada Lovelace'
                                                                           WHEN tenant_id = 9 THEN 'Grace Hopper'
                                                                           ELSE 'First' || id || ' Last' || id END)
                           AND NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'people'::regclass AND attname = 'full_name' AND NOT attisdropped)
                      FROM people
                    """,
                manifest: """
                    {"format": 2, "name": "split-name", "table": "people", "key": ["tenant_id", "id"],
                     "operations": [{"alter_column": {"from": "full_name",
                       "to": [{"name": "first_name", "type": "text", "notNull": true}, {"name": "last_name", "type": "text", "notNull": true}],
                       "up": {"first_name": "split_part(full_name, ' ', 1)", "last_name": "substr(full_name, length(split_part(full_name, ' ', 1)) + 2)"},
                       "down": "first_name || ' ' || last_name"}}]}
                    """),
    ]

    static func compile(_ example: String) throws -> CompiledPlan {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/\(example)/plan.json")
        return try DeclarativePlan(manifest: Array(try Data(contentsOf: url))).compile()
    }

    @Test(.timeLimit(.minutes(3)), arguments: examples)
    func wholeCycle(_ example: Example) async throws {
        let database = try await TestPostgres.database("declarative_cycle")
        let compiled = try example.manifest.map { try DeclarativePlan(manifest: Array($0.utf8)).compile() } ?? Self.compile(example.name)
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: example.schema)
            let steps = CompiledSteps(compiled: compiled, connection: connection)
            #expect(try steps.failingChecks(.expand) == [])
            try steps.run(.expand)
            try connection.execute(unsafeSQL: example.legacyWrite)
            try connection.execute(unsafeSQL: example.modernWrite)
            #expect(try steps.backfill(batchSize: 3) == 0)
            #expect(try steps.failingChecks(.contract) == [])
            try steps.run(.contract)
            #expect(try connection.query(PostgresQuery(unsafeSQL: example.contracted))[0].decode(Bool.self, at: 0))
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: examples)
    func revertExpand(_ example: Example) async throws {
        let database = try await TestPostgres.database("declarative_revert")
        let compiled = try example.manifest.map { try DeclarativePlan(manifest: Array($0.utf8)).compile() } ?? Self.compile(example.name)
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: example.schema)
            let steps = CompiledSteps(compiled: compiled, connection: connection)
            let before = try Self.columns(on: connection)
            try steps.run(.expand)
            try connection.execute(unsafeSQL: example.legacyWrite)
            #expect(try Self.columns(on: connection) != before)
            try steps.run(.expand, revert: true)
            #expect(try Self.columns(on: connection) == before)
            let leftovers = try connection.query("""
                SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = 'cutover'::regnamespace AND proname LIKE '%sync%')
                     + (SELECT count(*) FROM pg_trigger WHERE tgname = 'cutover_sync') AS n
                """)[0].decode(Int64.self, "n")
            #expect(leftovers == 0)
            // Running the revert again, as the runner does after a stopped expand, changes nothing and fails not.
            try steps.run(.expand, revert: true)
        }
    }

    /// The table columns of the public schema's tables, as `table.column type`.
    static func columns(on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT table_name || '.' || column_name || ' ' || data_type AS c FROM information_schema.columns
             WHERE table_schema = 'public' ORDER BY table_name, ordinal_position
            """).map { try $0.decode(String.self, "c") }
    }
}
