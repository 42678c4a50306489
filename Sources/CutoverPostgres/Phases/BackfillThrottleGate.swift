import Cutover
import Foundation
import PostgresClient

/// Holds a backfill's next batch while the database is busier than the operator allows: more
/// active sessions than the ceiling, or a throttle query answering true.
///
/// Asked before every batch, on the backfill's own connection, outside its batches'
/// transactions. The active sessions are the server's client backends running a statement
/// (`pg_stat_activity.state = 'active'`), the backfill's own sessions excluded; a role without
/// `pg_monitor` sees only its own sessions' state, and the gate says so once. The throttle
/// query runs in a read-only transaction under a 5 s statement timeout: while its first
/// column is true or a number above 0, the backfill waits. A throttle query that fails the
/// first time is a mistake in it and stops the backfill; one that fails later (a timeout on a
/// loaded server) holds the batch as if it had answered true, and says why.
final class BackfillThrottleGate {
    /// The ceilings; an operator's retune changes the active sessions one between batches.
    var throttle: PlanBackfillThrottle
    private let log: (String) -> Void
    private let noticeInterval: Duration
    private let pollInterval: Duration
    private let clock = ContinuousClock()
    private var lastNotice: ContinuousClock.Instant?
    private var hasAsked = false
    private var hasToldHidden = false
    /// The server processes the active sessions ceiling does not count: the backfill's other
    /// workers and the session of its own count. Asked at every check, and again after a count
    /// over the ceiling, so that a session that opens while a batch is held or while the check
    /// reads (the count's, once its thread has connected) is never what holds a batch.
    var excluded: () -> [Int32] = { [] }

    /// A gate for `throttle`'s ceilings; one without any lets every batch through without a query.
    init(_ throttle: PlanBackfillThrottle, log: @escaping (String) -> Void, noticeInterval: Duration = .seconds(5),
          pollInterval: Duration = .milliseconds(250)) {
        self.throttle = throttle
        self.log = log
        self.noticeInterval = noticeInterval
        self.pollInterval = pollInterval
    }

    /// Why the next batch must wait now, or nil when it may run.
    func reason(on connection: PostgresConnection) throws -> String? {
        if let ceiling = throttle.maximumActiveSessions {
            var left = excluded()
            while true {
                let row = try connection.query("""
                    SELECT count(*) FILTER (WHERE state = 'active') AS active, count(*) FILTER (WHERE state IS NULL) AS hidden
                      FROM pg_stat_activity
                     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
                       AND NOT (pid = ANY (CAST(string_to_array(\(left.map(String.init).joined(separator: ",")), ',') AS int[])))
                    """)[0]
                let active = try row.decode(Int64.self, "active")
                if try row.decode(Int64.self, "hidden") > 0, !hasToldHidden {
                    hasToldHidden = true
                    log("backfill: some sessions' state is hidden from this role (grant it pg_monitor), so only the sessions it can see count for --max-active-sessions")
                }
                guard active > ceiling else { break }
                // A session of the backfill's own that began while the query ran (the count's,
                // which records its process before its first statement) may be among those it
                // counted: ask again without it rather than hold a batch for it.
                let now = excluded()
                guard now != left else { return "\(active) active sessions, over the ceiling of \(ceiling)" }
                left = now
            }
        }
        if let query = throttle.throttleQuery {
            let isFirst = !hasAsked
            hasAsked = true
            do {
                if try Self.isThrottled(by: query, on: connection) { return "the throttle query answered true" }
            } catch let error as PostgresError where !isFirst && !error.isConnectionBroken {
                return "the throttle query failed: \(error)"
            } catch let error as PostgresError where isFirst && !error.isConnectionBroken {
                throw BackfillError.throttleQueryFailed(error.description)
            }
        }
        return nil
    }

    /// Waits until ``reason(on:)`` lets the batch run, saying why at most every notice
    /// interval; returns the reason it first waited for and the time waited, nil when it did not wait.
    ///
    /// - Parameter holds: hears the reason when the gate begins to hold the batch.
    /// - Throws: ``BackfillError/stopped(converted:)`` when a stop is requested while waiting.
    func waitWhileThrottled(on connection: PostgresConnection, converted: Int64, isStopRequested: () -> Bool,
                            holds: (String) throws -> Void = { _ in }) throws -> (reason: String, waited: Duration)? {
        var first: (reason: String, began: ContinuousClock.Instant)?
        while let reason = try reason(on: connection) {
            if isStopRequested() { throw BackfillError.stopped(converted: converted) }
            let now = clock.now
            if first == nil {
                first = (reason, now)
                try holds(reason)
            }
            if lastNotice.map({ now - $0 >= noticeInterval }) ?? true {
                lastNotice = now
                log("backfill throttled: \(reason); it goes on when that is no longer so")
            }
            Thread.sleep(forTimeInterval: pollInterval / .seconds(1))
        }
        return first.map { ($0.reason, clock.now - $0.began) }
    }

    /// Whether `query`'s first column, in its first row, is true or a number above 0.
    private static func isThrottled(by query: String, on connection: PostgresConnection) throws -> Bool {
        try connection.withTransaction { connection in
            try connection.execute(unsafeSQL: "SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = '5s'")
            let rows = try connection.query(PostgresQuery(unsafeSQL: query))
            guard !rows.columns.isEmpty, let text = rows.first?.text(at: 0) else { return false }
            switch text.lowercased() {
            case "t", "true": return true
            case "f", "false": return false
            default: return (Double(text) ?? 0) > 0
            }
        }
    }
}
