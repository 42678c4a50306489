@testable import CutoverPostgres
import PostgresClient
import Testing

/// Which errors a step survives by reconnecting, and which are its real answer.
@Suite("ConnectionLoss: what a reconnect may get past")
struct ConnectionLossTests {
    private func server(_ sqlState: SQLState) -> PostgresError {
        PostgresError(code: .server, message: "the server said so", sqlState: sqlState)
    }

    @Test(arguments: [SQLState.adminShutdown, .crashShutdown, .cannotConnectNow, .readOnlySQLTransaction,
                      .connectionException, .connectionFailure, .protocolViolation])
    func aShutdownAStandbyOrABrokenConnectionIsALoss(sqlState: SQLState) {
        let loss = ConnectionLoss(server(sqlState))
        #expect(loss != nil)
        #expect(loss?.reason.contains(sqlState.rawValue) == true, "\(String(describing: loss))")
    }

    @Test func aConnectionBrokenOrRefusedIsALoss() {
        #expect(ConnectionLoss(PostgresError(code: .connectionLost, message: "server closed the connection"))?.reason
                == "the connection broke")
        #expect(ConnectionLoss(PostgresError(code: .outcomeUnknown, message: "lost around COMMIT"))?.reason
                == "the connection broke around COMMIT")
        #expect(ConnectionLoss(PostgresError(code: .connectionFailed, message: "connection refused"))?.reason
                == "cannot connect to a writable server: connection refused")
    }

    @Test(arguments: [SQLState.queryCanceled, .lockNotAvailable, .serializationFailure, .insufficientPrivilege,
                      .uniqueViolation, .undefinedColumn, .inFailedSQLTransaction, .invalidPassword])
    func aCancelALockTimeoutOrABadStatementIsTheAnswer(sqlState: SQLState) {
        #expect(ConnectionLoss(server(sqlState)) == nil)
    }

    @Test func aRefusedRoleABadStringOrAnyOtherErrorIsTheAnswer() {
        #expect(ConnectionLoss(PostgresError(code: .accessDenied, message: "password authentication failed")) == nil)
        #expect(ConnectionLoss(PostgresError(code: .invalidConfiguration, message: "bad string")) == nil)
        #expect(ConnectionLoss(PostgresError(code: .commitRolledBack, message: "rolled back")) == nil)
        #expect(ConnectionLoss(StepRefusal(step: "contract", failedChecks: [], reason: "no")) == nil)
        #expect(ConnectionLoss(BackfillError.rowsStillLocked(3)) == nil)
    }

    @Test func aLeaseHeldByThisCommandsOwnEarlierSessionIsALossAndAnotherRunnersIsNot() {
        let holder = RunnerLock.Holder(plan: "drafts", pid: 4242, applicationName: "cutover-phase", databaseRole: "migrator",
                                       osUser: "ops", since: nil)
        let held = RunnerLockError.held(by: holder, plan: "drafts")
        #expect(ConnectionLoss(held, ownSessions: [4242])?.reason.contains("pid 4242") == true)
        #expect(ConnectionLoss(held, ownSessions: [17]) == nil)
        #expect(ConnectionLoss(held) == nil)
        #expect(ConnectionLoss(RunnerLockError.held(by: nil, plan: "drafts"), ownSessions: [4242]) == nil)
    }
}
