import Foundation
import PostgresClient
import Synchronization

/// The rows still to convert, counted on a session of its own while the backfill goes on.
///
/// A table too large to count within the check timeout before the first batch gets its total
/// when this count lands. The count reads, in one snapshot (`REPEATABLE READ`), the rows the
/// backfill had converted and the rows still to convert, so that the two add up to what there
/// was to convert at that moment, whatever batches commit while it reads. It runs under the
/// session's own statement timeout; ``cancel()`` stops it when the backfill ends first.
///
/// The server ignores a cancel request that reaches a session waiting for its next statement,
/// so the count looks for a cancel before sending each of its statements as well: a
/// ``cancel()`` that lands between two of them stops it before the next, not after a read of
/// the whole table. What is left is the instant between that look and the statement reaching
/// the server, far shorter than the cancel request's own way to the server.
final class BackgroundRemainingCount: Sendable {
    /// What the count saw, in one snapshot.
    struct Counted: Sendable, Equatable {
        /// Rows the backfill had converted.
        var converted: Int64
        /// Rows still to convert.
        var remaining: Int64
        /// How long the count took.
        var took: Duration
    }

    private struct State {
        var outcome: Result<Counted, any Error>?
        var canceller: PostgresCanceller?
        var sessionPID: Int32?
        var isCancelled = false
    }
    private let state = Mutex(State())

    /// Starts counting on a session `openSession` opens, on a thread of its own.
    /// `beforeStatement`, for tests, runs while the session waits for each statement (given its
    /// number, from 1), before the count looks for a cancel and sends it.
    init(plan: String, remainingSQL: String, openSession: @escaping @Sendable () throws -> PostgresConnection,
         beforeStatement: (@Sendable (Int) -> Void)? = nil) {
        let thread = Thread { [self] in
            let outcome: Result<Counted, any Error>
            do {
                outcome = .success(try count(plan: plan, remainingSQL: remainingSQL, openSession: openSession,
                                             beforeStatement: beforeStatement ?? { _ in }))
            } catch {
                outcome = .failure(error)
            }
            state.withLock { state in
                state.outcome = outcome
                state.canceller = nil
                state.sessionPID = nil
            }
        }
        thread.name = "cutover-backfill-count"
        thread.start()
    }

    /// The count once it has landed (or failed); nil while it runs.
    var outcome: Result<Counted, any Error>? { state.withLock { $0.outcome } }

    /// The server process of the count's session while it counts; nil before it has one and
    /// once the count has landed.
    var sessionPID: Int32? { state.withLock { $0.sessionPID } }

    /// Whether the count failed because ``cancel()`` stopped it.
    var wasCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Stops the count if it still runs; the server cancels its statement.
    func cancel() {
        let canceller = state.withLock { state in
            state.isCancelled = true
            return state.outcome == nil ? state.canceller : nil
        }
        canceller?.cancel()
    }

    private func count(plan: String, remainingSQL: String, openSession: @Sendable () throws -> PostgresConnection,
                       beforeStatement: @Sendable (Int) -> Void) throws -> Counted {
        let session = try openSession()
        session.noticeHandler = { _ in }
        state.withLock { state in
            state.canceller = session.canceller
            state.sessionPID = session.backendPID
        }
        var sent = 0
        // Each statement only after a look for a cancel that came while the session waited.
        func send<T>(_ statement: () throws -> T) throws -> T {
            sent += 1
            beforeStatement(sent)
            guard !state.withLock({ $0.isCancelled }) else { throw CancellationError() }
            return try statement()
        }
        let clock = ContinuousClock()
        let began = clock.now
        try send { try session.execute(unsafeSQL: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; " + BackfillEngine.countOnOneCore) }
        defer { if session.isConnected { _ = try? session.execute(unsafeSQL: "ROLLBACK") } }
        // The first read takes the snapshot both share.
        let converted = try send {
            try session.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = \(plan)")[0].decode(Int64.self, at: 0)
        }
        let remaining = try send { try session.query(PostgresQuery(unsafeSQL: remainingSQL))[0].decode(Int64.self, at: 0) }
        return Counted(converted: converted, remaining: remaining, took: clock.now - began)
    }
}
