@testable import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// The warnings `phase check` gives about a standby's settings, case by case, and the small
/// readings they rest on.
@Suite("Standby settings advice")
struct StandbySettingsAdviceTests {
    private func standby(feedback: Bool, delay: Int64) -> StandbyInspection {
        StandbyInspection(name: "10.0.0.7:5432", serverAddress: "10.0.0.7", systemIdentifier: "7", isInRecovery: true, receiverApplicationName: "replica-a",
                          isReceiverNameRead: true, sender: nil, replayPosition: nil, isReplayPaused: false,
                          hotStandbyFeedback: feedback, maxStandbyStreamingDelay: delay, maxStandbyArchiveDelay: 30_000,
                          conflicts: .init(snapshot: 3, lock: 1, bufferPin: 0, deadlock: 0, tablespace: 0))
    }

    @Test func withoutFeedbackAZeroDelayCancelsAtOnceAndAFiniteOneAfterItsWait() {
        let atOnce = StandbySettingsAdvice.warnings(for: standby(feedback: false, delay: 0), before: .rowRewrites)
        #expect(atOnce.count == 1)
        #expect(atOnce[0].contains("max_standby_streaming_delay is 0: every standby query that still sees a row version vacuum removes after backfill is cancelled at once"))
        let later = StandbySettingsAdvice.warnings(for: standby(feedback: false, delay: 30_000), before: .rowRewrites)
        #expect(later.count == 1)
        #expect(later[0].contains("is cancelled once replay has waited 30s, less the standby's lag at the time"))
    }

    @Test func minusOneNeverCancelsButLetsTheStandbyFallBehind() {
        let forever = StandbySettingsAdvice.warnings(for: standby(feedback: false, delay: -1), before: .rowRewrites)
        #expect(forever.count == 1)
        #expect(forever[0].contains("max_standby_streaming_delay is -1: replay waits for conflicting standby queries forever, so none is cancelled but the standby falls behind"))
        #expect(!forever[0].contains("cancelled at once"))
    }

    @Test func feedbackAvoidsSnapshotConflictsButNotLockConflicts() {
        #expect(StandbySettingsAdvice.warnings(for: standby(feedback: true, delay: 0), before: .rowRewrites).isEmpty)
        let locks = StandbySettingsAdvice.warnings(for: standby(feedback: true, delay: 5000), before: .exclusiveLocks)
        #expect(locks.count == 1)
        #expect(locks[0].contains("is cancelled once replay has waited 5s (max_standby_streaming_delay); hot_standby_feedback does not prevent lock conflicts"))
        let waits = StandbySettingsAdvice.warnings(for: standby(feedback: true, delay: -1), before: .exclusiveLocks)
        #expect(waits[0].contains("replay waits for every standby query on the table"))
        #expect(StandbySettingsAdvice.conflicts(standby(feedback: true, delay: 0).conflicts)
                == "snapshot 3, lock 1, buffer pin 0, deadlock 0, tablespace 0")
    }

    @Test func walPositionsAndTheEnvironmentsListReadAsPostgreSQLWritesThem() {
        #expect(WALPosition(text: "16/B374D848")?.value == 0x16_B374_D848)
        #expect(WALPosition(text: "16/B374D848")?.description == "16/B374D848")
        #expect(WALPosition(text: "0/10")!.bytes(since: WALPosition(text: "0/4")!) == 12)
        #expect(WALPosition(text: "0/4")!.bytes(since: WALPosition(text: "0/10")!) == 0)
        for bad in ["", "16", "x/1", "1/2/3", "100000000/0"] { #expect(WALPosition(text: bad) == nil, "\(bad)") }
        #expect(StandbyInspection.keyword("application_name", in: "user=r passfile=/p application_name=standby_a host=x") == "standby_a")
        #expect(StandbyInspection.keyword("application_name", in: "fallback_application_name=no application_name='a b\\'c'") == "a b'c")
        #expect(StandbyInspection.keyword("application_name", in: "fallback_application_name=no") == nil)
        #expect(StandbyOptions.urls(inEnvironmentValue: " postgresql://a/app\tpostgresql://b,c/app\n") == ["postgresql://a/app", "postgresql://b,c/app"])
    }
}

/// Sessions on a standby are opened again when the standby's replay cancelled their start-up,
/// and only then.
@Suite("Standby connections")
struct StandbyConnectTests {
    private final class Attempts: @unchecked Sendable {
        // Safe: each test touches it from its one thread only.
        var count = 0
    }

    private static let cancelled = PostgresError(code: .connectionFailed, message: "could not connect to PostgreSQL: FATAL:  canceling statement due to conflict with recovery",
                                                 sqlState: .serializationFailure)

    @Test func aStartUpCancelledByReplayIsTriedAgainUntilTheAttemptsRunOut() {
        let attempts = Attempts()
        #expect {
            _ = try StandbyOptions.connect(to: PostgresConfiguration(), attempts: 3) { _ in
                attempts.count += 1
                throw Self.cancelled
            }
        } throws: { ($0 as? PostgresError)?.sqlState == .serializationFailure }
        #expect(attempts.count == 3)
    }

    @Test func theSessionOpenedAfterACancelledStartUpIsReturned() async throws {
        let database = try await TestPostgres.database("standby_connect")
        let (pid, count) = try await onThread {
            let attempts = Attempts()
            let connection = try StandbyOptions.connect(to: database.configuration(), attempts: 5) { configuration in
                attempts.count += 1
                if attempts.count < 3 { throw Self.cancelled }
                return try PostgresConnection(configuration: configuration)
            }
            return (try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid") == connection.backendPID, attempts.count)
        }
        #expect(pid)
        #expect(count == 3)
    }

    @Test func anyOtherFailureIsThrownAtOnce() {
        let attempts = Attempts()
        #expect {
            _ = try StandbyOptions.connect(to: PostgresConfiguration(), attempts: 5) { _ in
                attempts.count += 1
                throw PostgresError(code: .connectionFailed, message: "could not connect to PostgreSQL: Connection refused")
            }
        } throws: { ($0 as? PostgresError)?.code == .connectionFailed }
        #expect(attempts.count == 1)
    }

    @Test func aStatementCancelledByReplayRunsAgainOnTheSameSession() async throws {
        let database = try await TestPostgres.database("standby_run_cancelled")
        let (samePID, runs) = try await onThread {
            var session: PostgresConnection? = try PostgresConnection(configuration: database.configuration())
            let first = session!.backendPID
            let attempts = Attempts()
            let pid = try StandbyOptions.run(on: &session, configuration: database.configuration()) { connection in
                attempts.count += 1
                if attempts.count == 1 {
                    _ = try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'canceling statement due to conflict with recovery' USING ERRCODE = '40001'; END $$")
                }
                return try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
            }
            return (pid == first && session?.backendPID == first, attempts.count)
        }
        #expect(samePID)
        #expect(runs == 2)
    }

    @Test func aSessionEndedUnderItIsOpenedAgainAndKept() async throws {
        let database = try await TestPostgres.database("standby_run_ended")
        let (ended, opened, kept) = try await onThread {
            let killer = try PostgresConnection(configuration: database.configuration())
            var session: PostgresConnection? = try PostgresConnection(configuration: database.configuration())
            let first = session!.backendPID
            let opens = Attempts()
            let pid = try StandbyOptions.run(on: &session, configuration: database.configuration(), open: { configuration in
                opens.count += 1
                return try PostgresConnection(configuration: configuration)
            }) { connection in
                if connection.backendPID == first {
                    _ = try killer.execute(unsafeSQL: "SELECT pg_terminate_backend(\(first), 10000)")
                }
                return try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int32.self, "pid")
            }
            return (pid != first, opens.count, session?.backendPID == pid)
        }
        #expect(ended, "the second run had a session of its own")
        #expect(opened == 1)
        #expect(kept, "the caller goes on with the session the last run used")
    }

    @Test func aRunOfOtherFailuresOrOutOfAttemptsThrows() async throws {
        let database = try await TestPostgres.database("standby_run_fails")
        let (other, exhausted) = try await onThread {
            var session: PostgresConnection?
            let otherRuns = Attempts()
            #expect {
                try StandbyOptions.run(on: &session, configuration: database.configuration()) { connection in
                    otherRuns.count += 1
                    _ = try connection.execute(unsafeSQL: "SELECT no_such_column FROM pg_class")
                }
            } throws: { ($0 as? PostgresError)?.sqlState == SQLState(rawValue: "42703") }
            let cancelledRuns = Attempts()
            #expect {
                try StandbyOptions.run(on: &session, configuration: database.configuration(), attempts: 3) { connection in
                    cancelledRuns.count += 1
                    _ = try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'cancelled' USING ERRCODE = '40001'; END $$")
                }
            } throws: { ($0 as? PostgresError)?.sqlState == .serializationFailure }
            return (otherRuns.count, cancelledRuns.count)
        }
        #expect(other == 1)
        #expect(exhausted == 3)
    }
}
