import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// What the sync trigger does on every write of the old application, kept short: its legacy
/// activity is read once a second per session, and the plan's expressions and the comparisons
/// are inlined where the compiler can tell every column, with a call kept where it cannot.
@Suite("The sync trigger's cost on the old application's writes")
struct SyncTriggerCostTests {
    @Test("a session reads the legacy-activity row once in a second however many legacy writes it makes", .timeLimit(.minutes(2)))
    func legacyActivityOncePerSecond() async throws {
        let database = try await TestPostgres.database("sync_trigger_note")
        try await onThread {
            try DeclarativeSyncTriggerTests.expandedOrders(10, on: try database.connect())
            let legacy = try database.connect(applicationName: "legacy-app")
            // One transaction: now() is one second for all its writes, and its own reads of the
            // table are counted in pg_stat_xact_user_tables.
            let (reads, calls) = try legacy.withTransaction { connection in
                try connection.execute(unsafeSQL: "SET LOCAL track_functions = 'all'")
                for id in 1...5 { try connection.execute(unsafeSQL: "UPDATE orders SET status = 'paid' WHERE id = \(id)") }
                try connection.execute(unsafeSQL: "INSERT INTO orders (id, status) VALUES (11, 'shipped')")
                let reads = try connection.query("""
                    SELECT seq_scan + coalesce(idx_scan, 0) AS reads FROM pg_stat_xact_user_tables
                     WHERE relid = 'cutover.legacy_activity'::regclass
                    """)[0].decode(Int64.self, "reads")
                let calls = try connection.query("""
                    SELECT funcname || ' ' || calls AS called FROM pg_stat_xact_user_functions
                     WHERE schemaname = 'cutover' AND funcname LIKE 'orders%' ORDER BY funcname
                    """).map { try $0.decode(String.self, "called") }
                return (reads, calls)
            }
            // The first legacy write looks at the row and updates it (two reads); the five after
            // it, in the same second, look at nothing (each would have read it once more).
            #expect(reads == 2)
            // The trigger and its one note are called; the plan's expressions and the
            // comparisons are inlined into the trigger's, so none of them is.
            #expect(calls == ["orders_note_legacy_write 1", "orders_sync 6"])
            let noted = try legacy.query("SELECT current_setting('cutover.legacy_noted', true) AS noted")[0]
                .decode(String?.self, "noted")
            #expect(noted?.hasSuffix(" public.orders") == true)
            let seen = try legacy.query("""
                SELECT last_write_at > '-infinity' AS seen FROM cutover.legacy_activity WHERE table_name = 'public.orders'
                """)[0].decode(Bool.self, "seen")
            #expect(seen)
            #expect(try legacy.query("SELECT count(*) AS n FROM orders WHERE status_code = 2")[0].decode(Int64.self, "n") == 5)
        }
    }

    @Test("a new writer's write compares with up(OLD) without calling the row function", .timeLimit(.minutes(2)))
    func modernWriteComparesWithoutACall() async throws {
        let database = try await TestPostgres.database("sync_trigger_compare")
        try await onThread {
            let connection = try database.connect()
            try DeclarativeSyncTriggerTests.expandedOrders(3, on: connection)
            try connection.execute(unsafeSQL: "SET track_functions = 'all'")
            let calls = try connection.withTransaction { connection in
                // Row 1: the modern column as up(OLD) gives it, so the legacy one stays; row 2:
                // another value, so the legacy one follows it.
                try connection.execute(unsafeSQL: """
                    SET LOCAL cutover.writer = 'modern';
                    UPDATE orders SET status_code = 1 WHERE id = 1;
                    UPDATE orders SET status_code = 3 WHERE id = 2
                    """)
                return try connection.query("""
                    SELECT coalesce(sum(calls), 0)::bigint AS calls FROM pg_stat_xact_user_functions
                     WHERE schemaname = 'cutover' AND funcname LIKE 'orders_status%'
                    """)[0].decode(Int64.self, "calls")
            }
            #expect(calls == 0)
            let rows = try connection.query("SELECT id, status, status_code FROM orders ORDER BY id")
            let found = try rows.map { "\(try $0.decode(Int64.self, "id")) \(try $0.decode(String.self, "status")) \(try $0.decode(Int16?.self, "status_code").map(String.init) ?? "NULL")" }
            #expect(found == ["1 new 1", "2 shipped 3", "3 new NULL"])
        }
    }

    @Test("a legacy write the compiler cannot read without a call still fills the modern column, through the call", .timeLimit(.minutes(2)))
    func expressionKeptAsCall() async throws {
        // `year` is an unreserved keyword: written bare, the compiler cannot be sure it is the
        // column, so the row function reads it from the row in a subquery, which PostgreSQL
        // does not inline: the trigger calls it.
        let manifest = """
            {"format": 2, "name": "events-year-label", "table": "public.events", "key": "id",
             "operations": [{"alter_column": {"from": "year", "to": {"name": "year_label", "type": "text"},
               "up": "'Y' || year::text", "down": "substr(year_label, 2)::int"}}]}
            """
        let database = try await TestPostgres.database("sync_trigger_call")
        let expand = try #require(try DeclarativePlan(manifest: Array(manifest.utf8)).compile().fileTexts["compiled/expand.sql"])
        #expect(expand.contains("NEW.year_label := cutover.events_year_label_up(NEW);"))
        #expect(expand.contains("RETURN (SELECT ('Y' || year::text) FROM (SELECT ($1).*) AS cutover_row)\n"))
        #expect(expand.contains("RETURN (substr(($1).year_label, 2)::int)\n"))
        try await onThread {
            _ = try CompiledSteps.expanded(manifest, on: try database.connect(),
                                           after: "CREATE TABLE events (id bigint PRIMARY KEY, year int NOT NULL)")
            let legacy = try database.connect(applicationName: "legacy-app")
            try legacy.execute(unsafeSQL: "INSERT INTO events (id, year) VALUES (1, 2024)")
            try legacy.execute(unsafeSQL: "INSERT INTO events (id, year) VALUES (2, 2023); UPDATE events SET year = 2025 WHERE id = 2")
            try legacy.execute(unsafeSQL: "INSERT INTO events (id, year_label) VALUES (3, 'Y1999')")
            let rows = try legacy.query("SELECT id, year, year_label FROM events ORDER BY id")
            let found = try rows.map { "\(try $0.decode(Int64.self, "id")) \(try $0.decode(Int32.self, "year")) \(try $0.decode(String.self, "year_label"))" }
            #expect(found == ["1 2024 Y2024", "2 2025 Y2025", "3 1999 Y1999"])
        }
    }
}
