import Testing
@testable import PostgresClient

/// How a failed start-up is told apart from libpq's message: the code, and the one SQLSTATE a
/// caller may act on.
@Suite("Connect failures")
struct ConnectFailureTests {
    @Test("a start-up that a standby's replay cancelled is 40001 and worth another try; nothing else carries a state", arguments: [
        ("connection to server at \"127.0.0.1\", port 5433 failed: FATAL:  canceling statement due to conflict with recovery", SQLState.serializationFailure),
        ("connection to server at \"127.0.0.1\", port 5433 failed: FATAL:  terminating connection due to conflict with recovery", .serializationFailure),
        ("connection to server at \"127.0.0.1\", port 5433 failed: Connection refused", nil),
        ("connection to server at \"127.0.0.1\", port 5433 failed: FATAL:  the database system is starting up", nil),
        ("connection to server at \"127.0.0.1\", port 5433 failed: FATAL:  password authentication failed for user \"app\"", nil),
    ])
    func sqlStateFromTheMessage(message: String, state: SQLState?) {
        #expect(ConnectFailure.sqlState(for: message) == state)
        #expect(ConnectFailure.code(for: message) != .invalidConfiguration)
    }
}
