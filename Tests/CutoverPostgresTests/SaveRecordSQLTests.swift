import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// `cutover.save_record` driven with plain SQL, as an application in another language (or a
/// psql user) would: under the application role, with its grants and nothing more.
@Suite("cutover.save_record from plain SQL")
struct SaveRecordSQLTests {
    /// The outcome and revision of one call, or the SQLSTATE and detail it raised.
    enum Answer: Equatable {
        case row(String, Int64?)
        case raised(SQLState?, String?)
    }

    private static func call(_ app: PostgresConnection, _ sql: String) -> Answer {
        do {
            let row = try app.query(PostgresQuery(unsafeSQL: sql))[0]
            return .row(try row.decode(String.self, "outcome"), try row.decode(Int64?.self, "revision"))
        } catch let error as PostgresError {
            return .raised(error.sqlState, error.detail)
        } catch {
            return .raised(nil, "\(error)")
        }
    }

    private static func save(_ operation: String, id: Int = 42, expected: Int, path: String = "modern",
                             columns: String = #"{"status_code": 2}"#) -> String {
        """
        SELECT outcome, revision FROM cutover.save_record('orders-status-code', 'shop-1', '\(operation)', '{"id": \(id)}',
                                                          \(expected), '\(path)', '\(columns)')
        """
    }

    @Test(.timeLimit(.minutes(3)))
    func replayConflictOperationConflictAndNotFound() async throws {
        try await Roles.withRoles("save_record_sql") { roles in
            try await roles.installAsMigrator()
            let grantOrders = "GRANT SELECT, INSERT, UPDATE ON orders TO \(roles.app)"
            try await onThread {
                let migrator = try PostgresConnection(configuration: roles.configuration(roles.migrator))
                try migrator.execute(unsafeSQL: try RecordTable.orders.schemaSQL())
                let compiled = try RecordTable.orders.compiled()
                try RecordPlanRegistry.register(compiled.declaration, on: migrator)
                try CompiledSteps(compiled: compiled, connection: migrator).run(.expand)
                try migrator.execute(unsafeSQL: grantOrders)
            }
            let answers = try await roles.asApplication { app in
                [
                    Self.call(app, Self.save("op-1", expected: 0)),
                    Self.call(app, Self.save("op-1", expected: 0)),
                    Self.call(app, Self.save("op-1", expected: 0, columns: #"{"status_code": 3}"#)),
                    // The server's own fingerprint covers the columns: the same order sent down
                    // the other path is another request.
                    Self.call(app, Self.save("op-1", expected: 0, path: "legacy", columns: #"{"status": "paid"}"#)),
                    Self.call(app, Self.save("op-2", expected: 0, path: "legacy", columns: #"{"status": "shipped"}"#)),
                    Self.call(app, Self.save("op-2", expected: 7, path: "legacy", columns: #"{"status": "shipped"}"#)),
                    Self.call(app, Self.save("op-2", expected: 1, path: "legacy", columns: #"{"status": "shipped"}"#)),
                    Self.call(app, Self.save("op-3", id: 43, expected: 1)),
                    Self.call(app, Self.save("op-3", id: 43, expected: 0)),
                ]
            }
            #expect(answers == [
                .row("committed", 1), .row("replayed", 1), .row("operationConflict", nil), .row("operationConflict", nil),
                .raised(SQLState(rawValue: "CU001"), "1"), .raised(SQLState(rawValue: "CU001"), "1"),
                .row("committed", 2),
                .raised(SQLState(rawValue: "CU002"), nil), .row("committed", 1),
            ])
            let (orders, ledger) = try await roles.admin { connection in
                (try connection.query("SELECT id || ' ' || status || ' ' || status_code || ' ' || revision AS o FROM orders ORDER BY id")
                    .map { try $0.decode(String.self, "o") },
                 try connection.query("""
                     SELECT operation_id || ' ' || record_key::text || ' ' || revision || ' ' || path AS e
                       FROM cutover.operation_ledger WHERE plan = 'orders-status-code' ORDER BY operation_id
                     """).map { try $0.decode(String.self, "e") })
            }
            #expect(orders == ["42 shipped 3 2", "43 paid 2 1"])
            #expect(ledger == [#"op-1 {"id": 42} 1 modern"#, #"op-2 {"id": 42} 2 legacy"#, #"op-3 {"id": 43} 1 modern"#])

            // The application may save and read, and nothing more: not register a plan's entity,
            // not write the ledger or the registry itself, not read a registration but the name
            // of its plan's own save function, which it may call as save_record does.
            let refused = try await roles.asApplication { app in
                [Self.call(app, "SELECT 'x' AS outcome, NULL::bigint AS revision FROM cutover.register_record_plan('orders-status-code', 'orders', '{status}')"),
                 Self.call(app, "SELECT table_name AS outcome, NULL::bigint AS revision FROM cutover.record_plans"),
                 Self.call(app, "SELECT 'read' AS outcome, revision FROM cutover.read_record('orders-status-code', '{\"id\": 43}')"),
                 Self.call(app, "SELECT save_function AS outcome, NULL::bigint AS revision FROM cutover.record_plans WHERE plan = 'orders-status-code'"),
                 Self.call(app, #"SELECT outcome, revision FROM cutover.save_record_orders_status_code('shop-1', 'op-5', '{"id": 43}', 1, 'modern', '{"status_code": 3}')"#),
                 Self.call(app, "SELECT 'x' AS outcome, NULL::bigint AS revision FROM cutover.make_record_save('orders-status-code')")]
            }
            #expect(refused == [.raised(.insufficientPrivilege, nil), .raised(.insufficientPrivilege, nil), .row("read", 1),
                                .row("cutover.save_record_orders_status_code", nil), .row("committed", 2),
                                .raised(.insufficientPrivilege, nil)])

            // What a caller gets wrong is refused before anything is claimed.
            let malformed = try await roles.asApplication { app in
                [Self.call(app, Self.save("op-4", expected: 0).replacing(#"'{"id": 42}'"#, with: #"'{"id": 44, "tenant": 1}'"#)),
                 Self.call(app, Self.save("op-4", expected: 0, columns: #"{"id": 45}"#)),
                 Self.call(app, Self.save("op-4", expected: 0, columns: #"{"revision": 9}"#)),
                 Self.call(app, Self.save("op-4", expected: 0).replacing("'orders-status-code'", with: "'no-such-plan'")),
                 Self.call(app, Self.save("op-4", expected: 0, path: "sideways"))]
            }
            let invalid = Answer.raised(SQLState(rawValue: "22023"), nil)
            #expect(malformed == [invalid, invalid, invalid, .raised(SQLState(rawValue: "CU006"), nil), invalid])
        }
    }
}
