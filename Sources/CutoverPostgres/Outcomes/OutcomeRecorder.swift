import Cutover
import Foundation
import PostgresClient
import Synchronization

/// Counts one plan's save outcomes per writer path and minute, and writes them to
/// `cutover.outcome_log` under that plan.
///
/// Counting costs the save nothing but a lock in memory; the counts go to the database in one
/// statement per flush, in the background, so the save path keeps its single round trip. A
/// flush that fails keeps its counts for the next one, and a background one tells the logger
/// the store was given, each time it fails. Counts not yet flushed when the process
/// dies are lost: the log is for observing rates, not for accounting. Nothing but the path,
/// the outcome code and the minute is kept: no payloads, titles or operation IDs.
public final class OutcomeRecorder: Sendable {
    /// The code counted for a save that failed outside the contract's outcomes (a lock
    /// timeout, a format the table does not hold, a connection lost before anything could
    /// commit).
    public static let errorCode = "error"

    struct Key: Hashable, Sendable {
        /// Minutes since 1970, UTC.
        var minute: Int64
        var path: SavePath
        var outcome: String
    }

    private let pool: PostgresPool
    /// The plan whose saves are counted.
    public let plan: String
    /// Counts not yet written.
    struct Counts {
        private var counted: [Key: Int64] = [:]
        /// The key counted last, and how many of its counts are not yet in `counted`: a store
        /// counts the same outcome on the same path in the same minute over and over, and
        /// comparing a key costs less than hashing it.
        private var last: Key?
        private var lastCount: Int64 = 0

        mutating func add(_ count: Int64, to key: Key) {
            if key != last {
                settle()
                last = key
            }
            lastCount = OutcomeRecorder.saturatingSum(lastCount, count)
        }

        /// Every count, emptying the tally.
        mutating func take() -> [Key: Int64] {
            settle()
            last = nil
            defer { counted = [:] }
            return counted
        }

        var all: [Key: Int64] {
            var copy = self
            copy.settle()
            return copy.counted
        }

        private mutating func settle() {
            if let last, lastCount > 0 { counted[last] = OutcomeRecorder.saturatingSum(counted[last] ?? 0, lastCount) }
            lastCount = 0
        }
    }
    private let pending = Mutex(Counts())
    private let flusher = Mutex<Task<Void, Never>?>(nil)
    private let clock: @Sendable () -> Date

    /// A recorder of `plan`'s outcomes, for a writer of the application's own that is not one
    /// of Cutover's stores: count each save's outcome with ``record(_:on:)`` (or
    /// ``recordError(on:)``) and `phase observe` judges them with the stores' counts.
    ///
    /// ```swift
    /// let outcomes = OutcomeRecorder(pool: pool, plan: "orders-status-code")
    /// outcomes.record(.committed, on: .modern)
    /// try await outcomes.close()   // before the process exits: writes what is left
    /// ```
    ///
    /// - Parameters:
    ///   - plan: the plan whose saves these are, as `phase --plan` names it.
    ///   - flushInterval: how often the counts are written in the background; nil writes them
    ///     only when ``flush()`` is called.
    ///   - logger: hears of each background flush that fails.
    public convenience init(pool: PostgresPool, plan: String, flushInterval: Duration? = .seconds(5),
                            logger: CutoverLogger = .disabled) {
        self.init(pool: pool, plan: plan, flushInterval: flushInterval, logger: logger, clock: Date.init)
    }

    init(pool: PostgresPool, plan: String, flushInterval: Duration?, logger: CutoverLogger = .disabled,
         clock: @escaping @Sendable () -> Date) {
        self.pool = pool
        self.plan = plan
        self.clock = clock
        guard let flushInterval else { return }
        let task = Task { [weak self] in
            var failures = 0
            while !Task.isCancelled {
                do { try await Task.sleep(for: flushInterval) } catch { return }
                guard let self else { return }
                do {
                    try await self.flush()
                    if failures > 0 {
                        logger.log(.notice, "outcome counts are written again after \(failures) failed flushes",
                                      metadata: ["failures": "\(failures)"])
                    }
                    failures = 0
                } catch {
                    failures += 1
                    logger.log(.warning, "writing outcome counts failed, keeping them for the next flush in \(flushInterval): \(error)",
                                   metadata: ["failures": "\(failures)", "unflushed": "\(self.unflushedTotal)"])
                }
            }
        }
        flusher.withLock { $0 = task }
    }

    deinit {
        flusher.withLock { $0?.cancel() }
    }

    /// Counts one outcome of the contract on a path, in the current minute.
    public func record(_ outcome: SaveOutcome, on path: SavePath) {
        count(outcome.code, on: path)
    }

    /// Counts, on a path, a save that failed outside the contract's outcomes (``errorCode``).
    public func recordError(on path: SavePath) {
        count(Self.errorCode, on: path)
    }

    /// Every code the log accepts: the contract's outcomes and ``errorCode``.
    public static let codes: [String] = SaveOutcome.allCases.map(\.code) + [errorCode]

    /// The most one flush adds to one path's count of one outcome, as `cutover.record_outcomes`
    /// allows; the rest waits for the next flush.
    static let maximumCountPerFlush: Int64 = 1_000_000_000

    private func count(_ code: String, on path: SavePath) {
        let minute = Int64((clock().timeIntervalSince1970 / 60).rounded(.down))
        let key = Key(minute: minute, path: path, outcome: code)
        pending.withLock { $0.add(1, to: key) }
    }

    /// The counts not yet written.
    public var unflushed: [(minute: Date, path: SavePath, outcome: String, count: Int64)] {
        pending.withLock { counts in
            counts.all.map { (Date(timeIntervalSince1970: TimeInterval($0.key.minute * 60)), $0.key.path, $0.key.outcome, $0.value) }
        }
    }

    /// How many outcomes are counted and not yet written.
    var unflushedTotal: Int64 {
        pending.withLock { $0.all.values.reduce(0, Self.saturatingSum) }
    }

    /// Writes the counts gathered so far in one statement; on failure they are kept for the
    /// next flush and the error is thrown.
    ///
    /// The database adds them to its current minute (`cutover.record_outcomes` takes no minute
    /// from its caller), so counts kept through failed flushes land in the minute they are
    /// written.
    public func flush() async throws {
        let plan = plan
        let batch = pending.withLock { $0.take() }
        guard !batch.isEmpty else { return }
        var totals: [Key: Int64] = [:]
        for (key, count) in batch {
            let total = Key(minute: 0, path: key.path, outcome: key.outcome)
            totals[total] = Self.saturatingSum(totals[total] ?? 0, count)
        }
        let entries = totals.sorted { ($0.key.path.rawValue, $0.key.outcome) < ($1.key.path.rawValue, $1.key.outcome) }
        let sent = entries.map { min($0.value, Self.maximumCountPerFlush) }
        let paths = entries.map(\.key.path.rawValue).joinedAsTextArray
        let outcomes = entries.map(\.key.outcome).joinedAsTextArray
        let counts = "{" + sent.map(String.init).joined(separator: ",") + "}"
        do {
            try await pool.withConnection { connection in
                try connection.query("""
                    SELECT cutover.record_outcomes(\(plan)::text, \(paths)::text[], \(outcomes)::text[], \(counts)::bigint[])
                    """)
            }
        } catch {
            pending.withLock { counts in
                for (key, count) in batch { counts.add(count, to: key) }
            }
            throw error
        }
        // What one flush may not add waits for the next.
        let minute = batch.keys.map(\.minute).max() ?? 0
        pending.withLock { counts in
            for (entry, count) in zip(entries, sent) where entry.value > count {
                counts.add(entry.value - count, to: Key(minute: minute, path: entry.key.path, outcome: entry.key.outcome))
            }
        }
    }

    /// `a + b`, or `Int64.max` where that overflows: counts are never negative.
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// Stops the background flushing and writes what is left.
    public func close() async throws {
        flusher.withLock { $0?.cancel() }
        try await flush()
    }
}
