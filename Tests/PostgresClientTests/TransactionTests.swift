import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Transactions")
struct TransactionTests {
    static let database = Task { try await TestPostgres.database("transactions") }

    private func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let database = try await Self.database.value
        return try await onThread { try body(try database.connect()) }
    }

    private func count(_ table: String) async throws -> Int {
        try await withConnection { try $0.query("SELECT count(*) AS n FROM \(identifier: table)")[0].decode(Int.self, "n") }
    }

    @Test func aBodyThatReturnsCommits() async throws {
        let isolation = try await withConnection { connection -> String in
            try connection.execute(unsafeSQL: "CREATE TABLE tx_commit (id int)")
            return try connection.withTransaction { connection in
                try connection.query("INSERT INTO tx_commit VALUES (\(1))")
                return try connection.query("SHOW transaction_isolation")[0].decode(String.self, at: 0)
            }
        }
        #expect(isolation == "read committed")
        #expect(try await count("tx_commit") == 1)
    }

    @Test func theIsolationLevelCanBeChosen() async throws {
        let isolation = try await withConnection { connection in
            try connection.withTransaction(isolation: .serializable) { connection in
                try connection.query("SHOW transaction_isolation")[0].decode(String.self, at: 0)
            }
        }
        #expect(isolation == "serializable")
    }

    /// Settings sent with BEGIN hold in the transaction and end with it; one the server refuses
    /// is thrown, with the transaction rolled back and the body never run.
    @Test func settingsSentWithBeginHoldForTheTransactionOnly() async throws {
        let (inside, after, refused, ran, stateAfterRefusal) = try await withConnection { connection in
            let inside = try connection.withTransaction(settings: "SET LOCAL lock_timeout = '7ms'; SET LOCAL work_mem = '5MB'") {
                try $0.query("SELECT current_setting('lock_timeout') || ' ' || current_setting('work_mem') AS s")[0].decode(String.self, "s")
            }
            let after = try connection.query("SELECT current_setting('lock_timeout') AS s")[0].decode(String.self, "s")
            var refused: PostgresError?
            var ran = false
            do {
                try connection.withTransaction(settings: "SET LOCAL lock_timeout = 'soon'") { _ in ran = true }
            } catch let error as PostgresError {
                refused = error
            }
            return (inside, after, refused, ran, connection.transactionState)
        }
        #expect(inside == "7ms 5MB")
        #expect(after == "0")
        #expect(refused?.sqlState == .invalidParameterValue, "\(String(describing: refused))")
        #expect(!ran)
        #expect(stateAfterRefusal == .idle)
    }

    @Test func aBodyThatThrowsRollsBackAndItsErrorIsTheOneThrown() async throws {
        struct Refusal: Error, Equatable {}
        let (thrown, state) = try await withConnection { connection -> (Bool, PostgresConnection.TransactionState) in
            try connection.execute(unsafeSQL: "CREATE TABLE tx_rollback (id int)")
            var thrown = false
            do {
                try connection.withTransaction { connection in
                    try connection.query("INSERT INTO tx_rollback VALUES (\(1))")
                    throw Refusal()
                }
            } catch is Refusal { thrown = true }
            return (thrown, connection.transactionState)
        }
        #expect(thrown)
        #expect(state == .idle)
        #expect(try await count("tx_rollback") == 0)
    }

    @Test func aCommitAnsweredWithRollbackIsAFailure() async throws {
        let failure = try await withConnection { connection -> PostgresError? in
            try connection.execute(unsafeSQL: "CREATE TABLE tx_swallowed (id int PRIMARY KEY)")
            do {
                try connection.withTransaction { connection in
                    try connection.query("INSERT INTO tx_swallowed VALUES (\(1))")
                    // The duplicate fails and aborts the transaction; the body swallows it.
                    _ = try? connection.query("INSERT INTO tx_swallowed VALUES (\(1))")
                }
                return nil
            } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.code == .commitRolledBack)
        #expect(error.description.hasPrefix("COMMIT was answered with ROLLBACK"))
        #expect(try await count("tx_swallowed") == 0)
    }

    @Test func aCommitRefusedByTheServerIsADefiniteFailure() async throws {
        let failure = try await withConnection { connection -> PostgresError? in
            try connection.execute(unsafeSQL: """
                CREATE TABLE tx_deferred (id int, CONSTRAINT tx_deferred_unique UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)
                """)
            do {
                try connection.withTransaction { connection in
                    try connection.query("INSERT INTO tx_deferred VALUES (\(1)), (\(1))")
                }
                return nil
            } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.code == .server)
        #expect(error.sqlState == .uniqueViolation)
        #expect(error.constraint == "tx_deferred_unique")
        #expect(try await count("tx_deferred") == 0)
    }

    @Test func aConnectionLostAroundCommitIsOutcomeUnknown() async throws {
        let database = try await Self.database.value
        let failure = try await onThread { () -> PostgresError? in
            let connection = try database.connect()
            let admin = try database.connect()
            try connection.execute(unsafeSQL: "CREATE TABLE tx_unknown (id int)")
            do {
                try connection.withTransaction { connection in
                    try connection.query("INSERT INTO tx_unknown VALUES (\(1))")
                    // The server goes away before COMMIT reaches it: the client cannot tell.
                    try admin.query("SELECT pg_terminate_backend(\(connection.backendPID), \(5000))")
                }
                return nil
            } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.code == .outcomeUnknown)
        #expect(error.description.contains("may or may not have committed"))
    }

    @Test func aConnectionLostInsideTheBodyIsConnectionLost() async throws {
        let database = try await Self.database.value
        let failure = try await onThread { () -> PostgresError? in
            let connection = try database.connect()
            let admin = try database.connect()
            do {
                try connection.withTransaction { connection in
                    try admin.query("SELECT pg_terminate_backend(\(connection.backendPID), \(5000))")
                    try connection.query("SELECT 1")
                }
                return nil
            } catch let error as PostgresError { return error }
        }
        #expect(failure?.code == .connectionLost)
        #expect(failure?.isConnectionBroken == true)
    }
}
