import CutoverPostgres
import PostgresClient
import Synchronization
import Testing

/// When a step is run again on a new session, and when its error is passed on at once.
@Suite("ReconnectingStep: the retry of a lost step")
struct ReconnectingStepTests {
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func append(_ line: String) { all.withLock { $0.append(line) } }
    }

    private let shutdown = PostgresError(code: .server, message: "terminating connection due to administrator command",
                                         sqlState: .adminShutdown)

    private func step(budget: Duration, lines: Lines, stop: @escaping @Sendable () -> Bool = { false }) -> ReconnectingStep {
        ReconnectingStep(command: "backfill", budget: budget, firstDelay: .milliseconds(1), longestDelay: .milliseconds(4),
                         isStopRequested: stop, log: lines.append)
    }

    @Test func aLostSessionIsReplacedAndTheStepFinishesWithOneLinePerAttempt() async throws {
        let lines = Lines()
        let step = step(budget: .seconds(30), lines: lines)
        let attempts = Atomic<Int>(0)
        let result = try await step.run { () async throws -> String in
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            step.connected(backendPID: Int32(100 + attempt))
            if attempt < 3 { throw shutdown }
            return "done on attempt \(attempt)"
        }
        #expect(result == "done on attempt 3")
        let logged = lines.all.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged.allSatisfy { $0.hasPrefix("backfill: the server shut down (SQLSTATE 57P01); reconnecting in ") }, "\(logged)")
        #expect(logged.last?.contains("(attempt 3, ") == true, "\(logged)")
    }

    @Test func aStepThatNeverConnectedIsNotRetried() async throws {
        let lines = Lines()
        let step = step(budget: .seconds(30), lines: lines)
        let attempts = Atomic<Int>(0)
        await #expect(throws: PostgresError.self) {
            try await step.run { () async throws -> Int in
                attempts.add(1, ordering: .relaxed)
                throw PostgresError(code: .connectionFailed, message: "connection refused")
            }
        }
        #expect(attempts.load(ordering: .relaxed) == 1)
        #expect(lines.all.withLock { $0 }.isEmpty)
    }

    @Test func aZeroBudgetAStopOrAnAnswerEndsTheStepAtOnce() async throws {
        for (budget, stop, error) in [(Duration.zero, false, shutdown as any Error),
                                      (.seconds(30), true, shutdown),
                                      (.seconds(30), false, PostgresError(code: .server, message: "canceled", sqlState: .queryCanceled))] {
            let lines = Lines()
            let step = step(budget: budget, lines: lines, stop: { stop })
            let attempts = Atomic<Int>(0)
            await #expect(throws: PostgresError.self) {
                try await step.run { () async throws -> Int in
                    attempts.add(1, ordering: .relaxed)
                    step.connected(backendPID: 7)
                    throw error
                }
            }
            #expect(attempts.load(ordering: .relaxed) == 1, "\(budget) \(stop) \(error)")
            #expect(lines.all.withLock { $0 }.isEmpty)
        }
    }

    @Test func aLossThatOutlastsTheBudgetIsThrownAfterSayingSo() async throws {
        let lines = Lines()
        let step = step(budget: .milliseconds(50), lines: lines)
        await #expect(throws: PostgresError.self) {
            try await step.run { () async throws -> Int in
                step.connected(backendPID: 7)
                throw PostgresError(code: .connectionLost, message: "server closed the connection unexpectedly")
            }
        }
        let logged = lines.all.withLock { $0 }
        #expect(logged.count >= 2)
        #expect(logged.last == "backfill: the connection broke; gave up reconnecting after 50ms (--reconnect-for)", "\(logged)")
    }
}
