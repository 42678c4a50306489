import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `pipelinedTransaction(settings:opening:_:)`: a transaction in two exchanges, classified as
/// `withTransaction` classifies its outcomes.
@Suite("Transactions in two exchanges")
struct TwoExchangeTransactionTests {
    static let database = Task { try await TestPostgres.database("two_exchanges") }

    private func withConnection<T: Sendable>(preparing statements: PostgresConfiguration.PreparedStatements = .unnamed,
                                             _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await Self.database.value.withConnection(preparing: statements, body)
    }

    private func count(_ table: String) async throws -> Int {
        try await withConnection { try $0.query("SELECT count(*) AS n FROM \(identifier: table)")[0].decode(Int.self, "n") }
    }

    /// The opening statement's rows reach the body, the closing statements built from them
    /// commit with it, and the settings hold for the transaction only; with statements sent
    /// unnamed and prepared once per connection alike.
    @Test(arguments: [PostgresConfiguration.PreparedStatements.unnamed, .perConnection])
    func theOpeningRowsReachTheBodyAndTheClosingStatementsCommitWithIt(_ statements: PostgresConfiguration.PreparedStatements) async throws {
        let table = "two_commit_\(statements)".lowercased(), log = "two_commit_log_\(statements)".lowercased()
        let (setting, returned, after, state) = try await withConnection(preparing: statements) { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE \(table) (id int PRIMARY KEY); CREATE TABLE \(log) (id int, note text)")
            var returned: [Int] = []
            var setting = ""
            // Twice on one connection: the second finds the statements prepared.
            for id in [1, 2] {
                let (lockTimeout, value) = try connection.pipelinedTransaction(
                    settings: ["SET LOCAL lock_timeout = '7ms'", "SET LOCAL work_mem = '5MB'"],
                    opening: """
                        INSERT INTO \(identifier: table) VALUES (\(id))
                        RETURNING id, current_setting('lock_timeout') || ' ' || current_setting('work_mem') AS settings
                        """
                ) { rows in
                    let value = try rows[0].decode(Int.self, "id")
                    let closing: [PostgresQuery] = [
                        "INSERT INTO \(identifier: log) VALUES (\(value), \("first"))",
                        "INSERT INTO \(identifier: log) VALUES (\(value), \("second"))",
                    ]
                    return ((try rows[0].decode(String.self, "settings"), value), closing)
                }
                setting = lockTimeout
                returned.append(value)
            }
            let after = try connection.query("SELECT current_setting('lock_timeout') AS s")[0].decode(String.self, "s")
            return (setting, returned, after, connection.transactionState)
        }
        #expect(setting == "7ms 5MB")
        #expect(returned == [1, 2])
        #expect(after == "0")
        #expect(state == .idle)
        #expect(try await count(table) == 2)
        #expect(try await count(log) == 4)
    }

    /// A refused setting or opening statement is thrown as the server said it, the transaction
    /// rolled back and the body never run.
    @Test func aRefusedSettingOrOpeningStatementIsThrownAndRolledBack() async throws {
        let (setting, opening, ran, state) = try await withConnection { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE two_refused (id int)")
            var ran = false
            func attempt(_ settings: [String], _ opening: PostgresQuery) -> PostgresError? {
                do {
                    try connection.pipelinedTransaction(settings: settings, opening: opening) { _ in
                        ran = true
                        return ((), [])
                    }
                    return nil
                } catch { return error as? PostgresError }
            }
            let setting = attempt(["SET LOCAL lock_timeout = 'soon'"], "INSERT INTO two_refused VALUES (\(1))")
            let opening = attempt([], "INSERT INTO two_refused SELECT 1 / (\(0) - 0)")
            return (setting, opening, ran, connection.transactionState)
        }
        #expect(setting?.sqlState == .invalidParameterValue, "\(String(describing: setting))")
        #expect(opening?.sqlState?.rawValue == "22012", "\(String(describing: opening))")
        #expect(!ran)
        #expect(state == .idle)
        #expect(try await count("two_refused") == 0)
    }

    /// A closing statement the server refuses, a COMMIT it refuses (a deferred constraint) and a
    /// body that throws each leave nothing committed, the opening statement's work included.
    @Test func aRefusedClosingStatementOrCommitOrAThrowingBodyCommitsNothing() async throws {
        struct Refusal: Error {}
        let (closing, commit, thrown, state) = try await withConnection { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE two_closing (id int PRIMARY KEY);
                CREATE TABLE two_deferred (id int, CONSTRAINT two_deferred_unique UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)
                """)
            func attempt(_ closing: [PostgresQuery], throwing: Bool = false) -> Error? {
                do {
                    try connection.pipelinedTransaction(opening: "INSERT INTO two_closing VALUES (\(1))") { _ in
                        if throwing { throw Refusal() }
                        return ((), closing)
                    }
                    return nil
                } catch { return error }
            }
            let closing = attempt(["INSERT INTO two_closing VALUES (\(1))", "INSERT INTO two_closing VALUES (\(2))"])
            let commit = attempt(["INSERT INTO two_deferred VALUES (\(1)), (\(1))"])
            let thrown = attempt([], throwing: true)
            return (closing as? PostgresError, commit as? PostgresError, thrown is Refusal, connection.transactionState)
        }
        #expect(closing?.sqlState == .uniqueViolation, "\(String(describing: closing))")
        #expect(commit?.sqlState == .uniqueViolation, "\(String(describing: commit))")
        #expect(commit?.constraint == "two_deferred_unique")
        #expect(thrown)
        #expect(state == .idle)
        #expect(try await count("two_closing") == 0)
        #expect(try await count("two_deferred") == 0)
    }

    /// A connection lost before the first exchange, or ended by the server before the closing
    /// exchange reached it, is broken, with nothing committed; a closing exchange left without
    /// an answer (here past the response timeout) leaves the outcome unknown.
    @Test func aConnectionLostIsDefiniteUntilTheClosingExchangeGoesUnanswered() async throws {
        let database = try await Self.database.value
        let (opening, closing, unanswered) = try await onThread { () -> (PostgresError?, PostgresError?, PostgresError?) in
            let admin = try database.connect()
            try admin.execute(unsafeSQL: "CREATE TABLE two_lost (id int)")
            func attempt(on connection: PostgresConnection, _ body: () throws -> [PostgresQuery]) -> PostgresError? {
                do {
                    try connection.pipelinedTransaction(opening: "INSERT INTO two_lost VALUES (\(1))") { _ in ((), try body()) }
                    return nil
                } catch { return error as? PostgresError }
            }
            let first = try database.connect()
            try admin.query("SELECT pg_terminate_backend(\(first.backendPID), \(5000))")
            let opening = attempt(on: first) { [] }
            let second = try database.connect()
            let closing = attempt(on: second) {
                // The server ends the session before the closing exchange reaches it.
                try admin.query("SELECT pg_terminate_backend(\(second.backendPID), \(5000))")
                return ["INSERT INTO two_lost VALUES (\(2))"]
            }
            var configuration = database.configuration()
            configuration.responseTimeout = .milliseconds(300)
            let third = try PostgresConnection(configuration: configuration)
            let unanswered = attempt(on: third) { ["SELECT pg_sleep(\(3))"] }
            return (opening, closing, unanswered)
        }
        #expect(opening?.isConnectionBroken == true, "\(String(describing: opening))")
        #expect(closing?.isConnectionBroken == true, "\(String(describing: closing))")
        #expect(closing?.code != .outcomeUnknown)
        #expect(unanswered?.code == .outcomeUnknown, "\(String(describing: unanswered))")
        #expect(unanswered?.description.contains("may or may not have committed") == true)
        #expect(try await count("two_lost") <= 1)
    }
}
