import Cutover
import Foundation
import PostgresClient

/// Runs a plan's SQL files so that nobody queues behind them for long.
///
/// Each file runs with a short `lock_timeout`: when the lock it needs is held by another
/// session, the file gives up within that time (so sessions queued behind it wait no longer),
/// backs off with exponential delay and jitter, and tries again, up to a bound. A file in a
/// transaction runs together with the caller's bookkeeping in that one transaction, so a runner
/// killed at any moment leaves either all of it or none. A file that cannot run in a transaction
/// (`CREATE INDEX CONCURRENTLY`) runs on its own; an index it leaves invalid (an interrupted
/// build) is dropped and the file run again.
public struct SQLFileRunner: Sendable {
    /// How the runner waits and retries.
    public struct Policy: Sendable, Equatable {
        /// The longest any statement waits for a lock (and so the longest others queue behind it).
        public var lockTimeout: Duration
        /// The longest any statement runs.
        public var statementTimeout: Duration
        /// How many times a file is tried in all when its locks are taken.
        public var maximumAttempts: Int
        /// The first wait between attempts; it doubles each time, up to ``maximumBackoff``, with
        /// up to half of it added at random.
        public var initialBackoff: Duration
        /// The longest wait between attempts.
        public var maximumBackoff: Duration

        /// The defaults: 500 ms lock timeout, 10 minutes statement timeout, 30 attempts,
        /// backoff from 100 ms to 5 s.
        public init(lockTimeout: Duration = .milliseconds(500), statementTimeout: Duration = .seconds(600),
                    maximumAttempts: Int = 30, initialBackoff: Duration = .milliseconds(100),
                    maximumBackoff: Duration = .seconds(5)) {
            self.lockTimeout = lockTimeout
            self.statementTimeout = statementTimeout
            self.maximumAttempts = maximumAttempts
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
        }
    }

    /// The policy in force.
    public var policy: Policy
    /// Called before each retry with the attempt number, the delay and the cause, in one line.
    public var onRetry: (@Sendable (Int, Duration, String) -> Void)?

    /// Sees every statement as it runs (a rehearsal's); nil sends each file whole.
    public var observer: (any StatementObserver)?

    /// A runner with the given policy.
    public init(policy: Policy = Policy(), observer: (any StatementObserver)? = nil,
                onRetry: (@Sendable (Int, Duration, String) -> Void)? = nil) {
        self.policy = policy
        self.observer = observer
        self.onRetry = onRetry
    }

    /// Runs `sql` in one transaction with `bookkeeping`, retrying lock timeouts and deadlocks.
    ///
    /// - Returns: how many attempts it took.
    @discardableResult
    public func runInTransaction(_ sql: String, on connection: PostgresConnection,
                                 bookkeeping: (PostgresConnection) throws -> Void = { _ in }) throws -> Int {
        try withRetries { _ in
            var isCommitted = false
            defer { observer?.fileEnded(isCommitted: isCommitted) }
            try connection.withTransaction { connection in
                try connection.execute(unsafeSQL: localSettings)
                try run(sql, on: connection)
                try bookkeeping(connection)
            }
            isCommitted = true
        }
    }

    /// Sends `sql` whole, or, with an observer, statement by statement between its calls.
    private func run(_ sql: String, on connection: PostgresConnection) throws {
        guard let observer else {
            try connection.execute(unsafeSQL: sql)
            return
        }
        for statement in SQLStatements.split(sql) {
            try observer.statementStarts(statement, on: connection)
            do {
                try connection.execute(unsafeSQL: statement)
            } catch {
                try observer.statementEnded(statement, on: connection, error: error)
                throw error
            }
            try observer.statementEnded(statement, on: connection, error: nil)
        }
    }

    /// Runs `sql` outside a transaction (for `CONCURRENTLY`), retrying lock timeouts, and
    /// rebuilding any index on `table` that it leaves invalid.
    ///
    /// Such a file cannot run under `SET LOCAL`, and a `SET` on the runner's session would stay
    /// with it. So it runs on a session of its own, opened by `openSession` (by default one like
    /// `connection`'s), with the policy's timeouts set on it, and closed after it: the settings
    /// end with that session. (On a session pooler, PgBouncer's `server_reset_query`, `DISCARD
    /// ALL` by default, clears them when it closes; a transaction pooler is refused earlier.)
    @discardableResult
    public func runOutsideTransaction(_ sql: String, table: String, on connection: PostgresConnection,
                                      openSession: (() throws -> PostgresConnection)? = nil) throws -> Int {
        let open = openSession ?? { try PostgresConnection(configuration: connection.configuration) }
        return try withRetries { _ in
            var isCommitted = false
            defer { observer?.fileEnded(isCommitted: isCommitted) }
            let session = try open()
            try session.execute(unsafeSQL: sessionSettings)
            try dropInvalidIndexes(on: table, connection: session)
            try run(sql, on: session)
            isCommitted = true
            let invalid = try invalidIndexes(on: table, connection: session)
            if !invalid.isEmpty { throw InvalidIndexLeft(names: invalid) }
        }
    }

    /// The policy's timeouts, by setting.
    private var settings: [(name: String, value: String)] {
        [("lock_timeout", "\(milliseconds(policy.lockTimeout))ms"), ("statement_timeout", "\(milliseconds(policy.statementTimeout))ms")]
    }

    /// The policy's timeouts for the session they are set on: one of the file's own.
    private var sessionSettings: String {
        settings.map { "SET \($0.name) = '\($0.value)'" }.joined(separator: "; ")
    }

    /// The names of the invalid indexes on `table` (left by an interrupted concurrent build).
    public func invalidIndexes(on table: String, connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE i.indrelid = to_regclass(\(table)) AND NOT i.indisvalid ORDER BY c.relname
            """).map { try $0.decode(String.self, "relname") }
    }

    private func dropInvalidIndexes(on table: String, connection: PostgresConnection) throws {
        for name in try invalidIndexes(on: table, connection: connection) {
            try connection.query("DROP INDEX CONCURRENTLY IF EXISTS \(identifier: name)")
        }
    }

    /// The policy's timeouts for the transaction they are set in, and no longer.
    private var localSettings: String {
        settings.map { "SET LOCAL \($0.name) = '\($0.value)'" }.joined(separator: "; ")
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        Int64((duration / .milliseconds(1)).rounded(.up))
    }

    /// An index build that ended with an invalid index; it is dropped and the build retried.
    struct InvalidIndexLeft: Error, CustomStringConvertible {
        var names: [String]
        var description: String { "an index build left invalid index(es) \(names.joined(separator: ", ")); rebuilding" }
    }

    private static func isRetryable(_ error: any Error) -> Bool {
        if error is InvalidIndexLeft { return true }
        guard let error = error as? PostgresError else { return false }
        return error.sqlState == .lockNotAvailable || error.sqlState == .deadlockDetected
    }

    private func withRetries(_ body: (Int) throws -> Void) throws -> Int {
        try retrying(when: Self.isRetryable) { attempt in
            try body(attempt)
            return attempt
        }
    }

    /// Runs `body` (given the attempt's number, from 1) until it returns, trying again after an
    /// error `isRetryable` accepts with the policy's backoff and jitter, reported to `onRetry`,
    /// up to the policy's attempts; any other error, or the last attempt's, is thrown.
    func retrying<Value>(when isRetryable: (any Error) -> Bool, _ body: (Int) throws -> Value) throws -> Value {
        var delay = policy.initialBackoff
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try body(attempt)
            } catch where isRetryable(error) && attempt < policy.maximumAttempts {
                let jittered = delay + delay * Double.random(in: 0...0.5)
                onRetry?(attempt, jittered, "\(error)")
                Thread.sleep(forTimeInterval: jittered / .seconds(1))
                delay = min(delay * 2, policy.maximumBackoff)
            }
        }
    }
}
