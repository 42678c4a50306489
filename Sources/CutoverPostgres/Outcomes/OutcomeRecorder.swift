import Cutover
import Foundation
import PostgresClient
import Synchronization

/// Counts save outcomes per writer path and minute, and writes them to `cutover.outcome_log`.
///
/// Counting costs the save nothing but a lock in memory; the counts go to the database in one
/// statement per flush, in the background, so the save path keeps its single round trip. A
/// flush that fails keeps its counts for the next one. Counts not yet flushed when the process
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
            lastCount += count
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
            if let last, lastCount > 0 { counted[last, default: 0] += lastCount }
            lastCount = 0
        }
    }
    private let pending = Mutex(Counts())
    private let flusher = Mutex<Task<Void, Never>?>(nil)
    private let clock: @Sendable () -> Date

    init(pool: PostgresPool, flushInterval: Duration?, clock: @escaping @Sendable () -> Date = Date.init) {
        self.pool = pool
        self.clock = clock
        guard let flushInterval else { return }
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: flushInterval)
                guard let self else { return }
                try? await self.flush()
            }
        }
        flusher.withLock { $0 = task }
    }

    deinit {
        flusher.withLock { $0?.cancel() }
    }

    /// Counts one outcome on a path, in the current minute.
    public func record(_ outcome: String, on path: SavePath) {
        let minute = Int64((clock().timeIntervalSince1970 / 60).rounded(.down))
        let key = Key(minute: minute, path: path, outcome: outcome)
        pending.withLock { $0.add(1, to: key) }
    }

    /// The counts not yet written.
    public var unflushed: [(minute: Date, path: SavePath, outcome: String, count: Int64)] {
        pending.withLock { counts in
            counts.all.map { (Date(timeIntervalSince1970: TimeInterval($0.key.minute * 60)), $0.key.path, $0.key.outcome, $0.value) }
        }
    }

    /// Writes the counts gathered so far in one statement; on failure they are kept for the
    /// next flush and the error is thrown.
    public func flush() async throws {
        let batch = pending.withLock { $0.take() }
        guard !batch.isEmpty else { return }
        struct Row: Encodable {
            let minute: Int64
            let path: String
            let outcome: String
            let count: Int64
        }
        let rows = batch.map { key, count in
            Row(minute: key.minute, path: key.path.rawValue,
                outcome: key.outcome, count: count)
        }
        do {
            let json = try PostgresJSON(rows)
            try await pool.withConnection { connection in
                try connection.query("""
                    INSERT INTO cutover.outcome_log AS log (minute, path, outcome, count)
                    SELECT to_timestamp(minute * 60), path, outcome, count
                      FROM jsonb_to_recordset(\(json)) AS r(minute bigint, path text, outcome text, count bigint)
                    ON CONFLICT (minute, path, outcome) DO UPDATE SET count = log.count + EXCLUDED.count
                    """)
            }
        } catch {
            pending.withLock { counts in
                for (key, count) in batch { counts.add(count, to: key) }
            }
            throw error
        }
    }

    /// Stops the background flushing and writes what is left.
    public func close() async throws {
        flusher.withLock { $0?.cancel() }
        try await flush()
    }
}
