import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// Each registered plan's own save function (`cutover.make_record_save`), which
/// `cutover.save_record` calls: statements written out for the table as it is, made again by
/// every step that changes the table; any save it was not made for goes to
/// `cutover.save_record_dynamic`, whose statements are made per call and kept in
/// `cutover.record_statements`. A save that leaves no row there ran the plan's own statements.
@Suite("The plan's own save function", .timeLimit(.minutes(3)))
struct RecordSaveFunctionTests {
    /// What one `cutover.save_record` call gave: its outcome and revision, or the SQLSTATE and
    /// message it raised.
    enum Answer: Equatable {
        case row(String, Int64?)
        case raised(String, String)
    }

    /// What a call of a save function gave: the first row `call` returns, or what it raised.
    static func answer(_ call: () throws -> PostgresRow) -> Answer {
        do {
            let row = try call()
            return .row(try row.decode(String.self, "outcome"), try row.decode(Int64?.self, "revision"))
        } catch let error as PostgresError {
            return .raised(error.sqlState?.rawValue ?? "", error.message)
        } catch {
            return .raised("", "\(error)")
        }
    }

    private static func save(_ connection: PostgresConnection, plan: String, _ operation: String, key: String,
                             expected: Int64, path: String, columns: String) -> Answer {
        answer {
            try connection.query("""
                SELECT outcome, revision FROM cutover.save_record(\(plan), 's', \(operation), CAST(\(key) AS jsonb),
                                                                  \(expected), \(path), CAST(\(columns) AS jsonb))
                """)[0]
        }
    }

    /// How many sets of statements `save_record_dynamic` made for `plan`.
    private static func dynamicStatements(_ connection: PostgresConnection, plan: String) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM cutover.record_statements WHERE plan = \(plan)")[0].decode(Int.self, "n")
    }

    private static func xmin(_ connection: PostgresConnection, id: Int) throws -> Int64 {
        try connection.query("SELECT xmin::text::bigint AS x FROM orders WHERE id = \(id)")[0].decode(Int64.self, "x")
    }

    private func runner(_ connection: PostgresConnection) throws -> PhaseRunner {
        var options = PhaseRunner.Options()
        options.forceReaders = true
        options.modernWriterWindow = .zero
        return PhaseRunner(connection: connection, source: try PlanSource.folder(RecordTable.exampleFolder("orders-status-code")),
                           options: options)
    }

    @Test func theRunnerMakesItAgainWithEveryStepThatChangesTheTable() async throws {
        let database = try await TestPostgres.database("save_function_steps")
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try RecordTable.ordersWithoutRevision.schemaSQL())
            let runner = try self.runner(connection)
            try runner.initialize()
            let plan = "orders-status-code"
            let registered = try connection.query("SELECT save_function FROM cutover.record_plans WHERE plan = \(plan)")[0]
            #expect(try registered.decode(String?.self, "save_function") == "cutover.save_record_orders_status_code")
            func save(_ operation: String, id: Int = 1, expected: Int64, _ path: String, _ columns: String) -> Answer {
                Self.save(connection, plan: plan, operation, key: #"{"id": \#(id)}"#, expected: expected, path: path, columns: columns)
            }
            func dynamic() throws -> Int { try Self.dynamicStatements(connection, plan: plan) }

            // Baseline: the legacy columns only.
            #expect(save("create", expected: 0, "legacy", #"{"status": "new"}"#) == .row("committed", try Self.xmin(connection, id: 1)))
            #expect(save("early", expected: try Self.xmin(connection, id: 1), "modern", #"{"status_code": 2}"#)
                == .raised("CU004", "public.orders has no column status_code: the modern format is not stored yet (run expand first); save through the legacy writer"))
            #expect(try dynamic() == 0)

            // Expand adds status_code: the function made again with expand writes it itself.
            try runner.run(.expand)
            #expect(save("pay", expected: try Self.xmin(connection, id: 1), "modern", #"{"status_code": 2}"#)
                == .row("committed", try Self.xmin(connection, id: 1)))
            #expect(try dynamic() == 0)
            // Columns of neither path: made at the call, the same outcome.
            let paid = try Self.xmin(connection, id: 1)
            #expect(save("both", expected: paid, "modern", #"{"status": "shipped", "status_code": 3}"#)
                == .row("committed", try Self.xmin(connection, id: 1)))
            #expect(try dynamic() == 1)
            #expect(save("both", expected: paid, "modern", #"{"status": "shipped", "status_code": 3}"#)
                == .row("replayed", try Self.xmin(connection, id: 1)))

            // Reverting expand removes status_code, and the function that wrote it.
            try runner.rollback(undoing: .expand)
            #expect(save("after-revert", expected: try Self.xmin(connection, id: 1), "modern", #"{"status_code": 1}"#)
                == .raised("CU004", "public.orders has no column status_code: the modern format is not stored yet (run expand first); save through the legacy writer"))
            #expect(save("legacy-again", expected: try Self.xmin(connection, id: 1), "legacy", #"{"status": "paid"}"#)
                == .row("committed", try Self.xmin(connection, id: 1)))
            #expect(try dynamic() == 1)

            // The whole way to contract: the legacy column goes, the modern one stays.
            for step in [PhaseStep.expand, .switchModern, .backfill, .contract] { try runner.run(step) }
            #expect(save("ship", expected: try Self.xmin(connection, id: 1), "modern", #"{"status_code": 3}"#)
                == .row("committed", try Self.xmin(connection, id: 1)))
            #expect(save("create-2", id: 2, expected: 0, "modern", #"{"status_code": 1}"#) == .row("committed", try Self.xmin(connection, id: 2)))
            #expect(save("late", expected: try Self.xmin(connection, id: 1), "legacy", #"{"status": "new"}"#)
                == .raised("CU004", "public.orders has no column status: the legacy format is no longer stored (contract removed it); save through the modern writer"))
            #expect(try dynamic() == 1)
            let rows = try connection.query("SELECT id || ' ' || status_code AS r FROM orders ORDER BY id").map { try $0.decode(String.self, "r") }
            #expect(rows == ["1 3", "2 1"])
            let ledger = try connection.query("SELECT count(*)::int AS n FROM cutover.operation_ledger WHERE plan = \(plan)")[0]
            #expect(try ledger.decode(Int.self, "n") == 6)
        }
    }

    /// Without a revision column the revision is the row's xmin, which a save inside a
    /// subtransaction (a savepoint of the caller's) writes as the subtransaction's ID: the
    /// ledger keeps that one, not the one it predicted, on both the function's path and the other.
    @Test func insideASavepointTheLedgerKeepsTheXminTheRowWasWrittenWith() async throws {
        let database = try await TestPostgres.database("save_function_savepoint")
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try RecordTable.ordersWithoutRevision.schemaSQL())
            let runner = try self.runner(connection)
            try runner.initialize()
            try runner.run(.expand)
            for (id, columns) in [(5, #"{"status_code": 1}"#), (6, #"{"status": "new", "status_code": 1}"#)] {
                try connection.execute(unsafeSQL: """
                    BEGIN;
                    SELECT pg_current_xact_id();
                    SAVEPOINT inner_save;
                    SELECT cutover.save_record('orders-status-code', 's', 'in-savepoint-\(id)', '{"id": \(id)}', 0, 'modern', '\(columns)');
                    RELEASE SAVEPOINT inner_save;
                    COMMIT;
                    """)
                let row = try Self.xmin(connection, id: id)
                let ledger = try connection.query("""
                    SELECT revision FROM cutover.operation_ledger WHERE plan = 'orders-status-code' AND operation_id = \("in-savepoint-\(id)")
                    """)[0].decode(Int64.self, "revision")
                #expect(ledger == row)
                #expect(Self.save(connection, plan: "orders-status-code", "in-savepoint-\(id)", key: #"{"id": \#(id)}"#, expected: 0,
                                  path: "modern", columns: columns) == .row("replayed", row))
            }
            // The second went to save_record_dynamic.
            #expect(try Self.dynamicStatements(connection, plan: "orders-status-code") == 1)
        }
    }

    @Test func aFunctionMadeBeforeAChangeByHandIsSlowerNeverWrong() async throws {
        let database = try await TestPostgres.database("save_function_by_hand")
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: """
                CREATE TABLE items (id bigint PRIMARY KEY, a varchar(5), b text, revision bigint NOT NULL DEFAULT 1)
                """)
            try RecordPlanRegistry.register(plan: "items", table: "items", key: ["id"], revision: "revision",
                                            legacyColumns: ["a"], modernColumns: ["b"], on: connection)
            // a is the legacy path's column, b the modern path's.
            func save(_ operation: String, expected: Int64, _ columns: String) -> Answer {
                Self.save(connection, plan: "items", operation, key: #"{"id": 7}"#, expected: expected,
                          path: columns.contains(#""b""#) ? "modern" : "legacy", columns: columns)
            }
            // A path's own function, called as the Swift store does: text values in the registered order.
            func direct(_ path: String, _ operation: String, expected: Int64, _ value: String) -> Answer {
                Self.answer {
                    // The name ends in a part of the md5 of the order of its parameters.
                    let function = try connection.query("""
                        SELECT \(unsafeRaw: path)_save_function AS f FROM cutover.record_plans WHERE plan = 'items'
                        """)[0].decode(String.self, "f")
                    return try connection.query("""
                        SELECT outcome, revision FROM \(unsafeRaw: function)('s', \(operation), '7', \(expected), \(value), '\\x01')
                        """)[0]
                }
            }
            func dynamic() throws -> Int { try Self.dynamicStatements(connection, plan: "items") }

            #expect(save("1", expected: 0, #"{"a": "x"}"#) == .row("committed", 1))
            #expect(save("2", expected: 1, #"{"b": "y"}"#) == .row("committed", 2))
            // A value longer than the column allows fails as in any UPDATE; it is not cut.
            #expect(save("3", expected: 2, #"{"a": "too long"}"#) == .raised("22001", "value too long for type character varying(5)"))
            #expect(try dynamic() == 0)

            // b dropped by hand: its saves are refused by name, a's still run the function's statements.
            try connection.execute(unsafeSQL: "ALTER TABLE items DROP COLUMN b")
            #expect(save("4", expected: 2, #"{"b": "z"}"#)
                == .raised("CU004", "public.items has no column b: the modern format is not stored yet (run expand first); save through the legacy writer"))
            #expect(save("5", expected: 2, #"{"a": "w"}"#) == .row("committed", 3))
            #expect(try dynamic() == 0)
            // Called directly, the modern path's function names the column it lacks; the store
            // then saves through save_record, which says CU004 as above.
            #expect(direct("modern", "5b", expected: 3, "z") == .raised("42703", "column t.b does not exist"))

            // a made an integer by hand: its saves are made at the call, for the new type.
            try connection.execute(unsafeSQL: "ALTER TABLE items ALTER COLUMN a TYPE integer USING NULL")
            #expect(save("6", expected: 3, #"{"a": 12}"#) == .row("committed", 4))
            #expect(try dynamic() == 1)
            // So does a direct call of the legacy path's function, made for varchar(5).
            #expect(direct("legacy", "6b", expected: 4, "123456") == .row("committed", 5))
            #expect(try dynamic() == 1)
            // Made again, the function writes the integer itself.
            _ = try connection.query("SELECT cutover.make_record_save('items')")
            #expect(save("7", expected: 5, #"{"a": 13}"#) == .row("committed", 6))
            #expect(direct("legacy", "7b", expected: 6, "14") == .row("committed", 7))
            #expect(direct("legacy", "7b", expected: 6, "14") == .row("replayed", 7))
            #expect(try dynamic() == 1)
            let row = try connection.query("SELECT a || ' ' || revision AS r FROM items")[0]
            #expect(try row.decode(String.self, "r") == "14 7")

            // The table gone: the function is dropped with its next making, and a save says why.
            try connection.execute(unsafeSQL: "DROP TABLE items")
            #expect(save("8", expected: 7, #"{"a": 15}"#) == .raised("CU006", "table public.items of plan items does not exist"))
            _ = try connection.query("SELECT cutover.make_record_save('items')")
            let left = try connection.query("""
                SELECT (SELECT save_function FROM cutover.record_plans WHERE plan = 'items') IS NULL AS cleared,
                       NOT EXISTS (SELECT FROM pg_proc WHERE proname = 'save_record_items' OR proname ~ '^save_(legacy|modern)_items_') AS dropped
                """)[0]
            #expect(try left.decode(Bool.self, "cleared") && left.decode(Bool.self, "dropped"))
        }
    }

    @Test func plansWhoseNamesMeetGetFunctionsOfTheirOwn() async throws {
        let database = try await TestPostgres.database("save_function_names")
        try await onThread {
            let connection = try database.connect()
            _ = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: """
                CREATE TABLE one (id text PRIMARY KEY, v text);
                CREATE TABLE two (id text PRIMARY KEY, v text);
                """)
            for (plan, table) in [("Team A/notes", "one"), ("team-a-notes", "two")] {
                try RecordPlanRegistry.register(plan: plan, table: table, key: ["id"], revision: nil,
                                                legacyColumns: ["v"], modernColumns: [], on: connection)
            }
            let names = try connection.query("SELECT save_function AS f FROM cutover.record_plans WHERE plan <> 'drafts' ORDER BY plan")
                .map { try $0.decode(String.self, "f") }
            #expect(names.count == 2 && Set(names).count == 2)
            #expect(names.allSatisfy { $0.hasPrefix("cutover.save_record_team_a_notes") })
            for (plan, table) in [("Team A/notes", "one"), ("team-a-notes", "two")] {
                let answer = Self.save(connection, plan: plan, "op", key: #"{"id": "k"}"#, expected: 0, path: "legacy",
                                       columns: #"{"v": "\#(table)"}"#)
                guard case .row("committed", _) = answer else {
                    Issue.record("\(plan): \(answer)")
                    continue
                }
            }
            let rows = try connection.query("SELECT (SELECT v FROM one) || ' ' || (SELECT v FROM two) AS r")[0]
            #expect(try rows.decode(String.self, "r") == "one two")
            #expect(try Self.dynamicStatements(connection, plan: "Team A/notes") == 0)
        }
    }
}
