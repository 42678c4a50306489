import PostgresClient
import Synchronization

/// Whether a backfill's next batch tries the plan's direct batch, which waits for rows other
/// transactions hold, or goes straight to the skipping one.
///
/// A direct batch whose wait ran out is rolled back and done again by the skipping batch: its
/// work so far is lost. Where the application holds rows for long, one batch after another
/// would pay that, so after a wait that ran out the next ``skippingAfterWait`` batches skip from
/// the start; the one after them tries the direct batch again. Shared by every worker of one
/// backfill.
final class DirectBatchGate: Sendable {
    /// Batches that skip from the start after a direct batch's wait ran out.
    static let skippingAfterWait = 10

    private struct State {
        var skippingLeft = 0
        var waitsRunOut = 0
        var deadlockTimeout: Duration?
    }

    private let state = Mutex(State())

    /// Whether the next batch tries the direct batch; counts a skipping batch down when not.
    func isNextDirect() -> Bool {
        state.withLock { state in
            guard state.skippingLeft > 0 else { return true }
            state.skippingLeft -= 1
            return false
        }
    }

    /// A direct batch's wait ran out: the next ``skippingAfterWait`` batches skip.
    func waitRanOut() {
        state.withLock { state in
            state.skippingLeft = Self.skippingAfterWait
            state.waitsRunOut += 1
        }
    }

    /// Reads the session's `deadlock_timeout`, which ``wait(atMost:)`` keeps the wait under.
    func readDeadlockTimeout(on connection: PostgresConnection) throws {
        let milliseconds = try connection.query("SELECT setting::bigint AS ms FROM pg_catalog.pg_settings WHERE name = 'deadlock_timeout'")
            .first.map { try $0.decode(Int64.self, "ms") }
        state.withLock { $0.deadlockTimeout = milliseconds.map { .milliseconds($0) } }
    }

    /// The wait a direct batch may have: `wait`, or half the session's `deadlock_timeout` when
    /// that is shorter, so that the batch gives up before the server looks for a deadlock (and
    /// fails one of the transactions in it, perhaps the application's).
    func wait(atMost wait: Duration) -> Duration {
        guard let deadlock = state.withLock({ $0.deadlockTimeout }) else { return wait }
        return min(wait, deadlock / 2)
    }

    /// Direct batches whose wait ran out so far.
    var waitsRunOut: Int { state.withLock { $0.waitsRunOut } }
}
