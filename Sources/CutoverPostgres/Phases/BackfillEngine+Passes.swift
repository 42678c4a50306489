import Cutover
import Foundation
import PostgresClient

extension BackfillEngine {
    /// Keys a pass walks: those after `after` (nil: from the table's first key) up to and
    /// including `upper` (nil: to its last).
    struct KeySpan: Sendable, Equatable {
        var after: String?
        var upper: String?

        /// The whole table.
        static let whole = KeySpan(after: nil, upper: nil)
    }

    /// The rows still to convert that a pass's batches could not lock, because other
    /// transactions held them, and the key spans of the batches that skipped them: what the
    /// next pass walks again, instead of the whole table.
    struct SkippedRows: Sendable {
        /// Whether every batch said what it skipped: a compiled batch does, a hand-written one
        /// need not, and then only a count of the table tells whether rows remain.
        private(set) var isCounted = true
        /// Rows skipped in all.
        private(set) var count: Int64 = 0
        /// The spans to walk again, in the order their batches ran.
        private(set) var spans: [KeySpan] = []

        /// Whether the next pass walks the keys of batches that skipped rows, without a count
        /// first.
        var isRetried: Bool { isCounted && count > 0 }

        /// Spans kept before the next pass walks the whole table instead.
        static let mostSpans = 10_000

        /// A batch that walked the keys after `after` through `last` skipped `skipped` rows (nil:
        /// it does not say).
        mutating func note(_ skipped: Int64?, after: String?, through last: String?) {
            guard let skipped else {
                isCounted = false
                return
            }
            guard skipped > 0 else { return }
            count += skipped
            // Past the most spans, the next pass walks the whole table.
            if spans == [.whole] { return }
            if let previous = spans.last, let end = previous.upper, end == after {
                spans[spans.count - 1].upper = last
            } else {
                spans.append(KeySpan(after: after, upper: last))
            }
            if spans.count > Self.mostSpans { spans = [.whole] }
        }
    }

    /// What follows a pass that skipped `skipped`: nil when the backfill is finished, or the
    /// spans the next pass walks.
    ///
    /// A pass whose batches skipped rows is followed by one over their keys alone, without
    /// counting the table; by one over the whole table when the batch cannot stop at the end of
    /// a span (``isBatchBounded``), whose spans would each walk on to the table's end, over the
    /// spans after them, counting again the rows held there. A pass that skipped none has
    /// converted every row still to convert it walked: the count that confirms it runs under
    /// ``Options/startCountTimeout``, and past it the backfill ends uncounted (contract counts
    /// before it runs), once a pass has walked the keys `uncovered` too: those an earlier run
    /// walked, whose skipped rows this one did not see. A count that finds rows no batch saw (a
    /// write that bypassed the sync trigger) sends the next pass over the whole table, as does
    /// every pass of a batch that does not say what it skipped, after a count under the
    /// statement timeout.
    ///
    /// A count still running in `background` goes on through a pass over skipped rows' keys;
    /// otherwise it is cancelled first.
    func afterPass(skipping skipped: SkippedRows, uncovered: inout [KeySpan], background: inout BackgroundRemainingCount?,
                   current: inout Progress, state: inout MigrationState, on connection: PostgresConnection,
                   isStopRequested: () -> Bool, log: (String) -> Void) throws -> [KeySpan]? {
        if skipped.isRetried {
            guard current.pass < options.maximumPasses else { throw BackfillError.rowsStillLocked(skipped.count) }
            let walk = isBatchBounded ? "walks again the keys of the batches that skipped them" : "walks the whole table again"
            log("backfill: pass \(current.pass) skipped \(skipped.count) rows other transactions held; pass \(current.pass + 1) \(walk)")
            return isBatchBounded ? skipped.spans : [.whole]
        }
        background?.cancel()
        background = nil
        let left: Int64
        if skipped.isCounted {
            guard let counted = try startingCount(on: connection, timeout: options.startCountTimeout, isStopRequested: isStopRequested) else {
                let timeout = options.startCountTimeout.map { " within " + DurationText.format($0) } ?? ""
                if !uncovered.isEmpty {
                    log("backfill: the rows left were not counted\(timeout) (the count reads the table); pass \(current.pass + 1) "
                        + "walks the keys an earlier run walked, whose skipped rows this run has not seen")
                    defer { uncovered = [] }
                    return uncovered
                }
                log("backfill: pass \(current.pass) converted every row still to convert that it walked; the rows left were not "
                    + "counted\(timeout) (the count reads the table), and contract counts them before it runs")
                return nil
            }
            left = counted
        } else {
            left = try passEndCount(on: connection, pass: current.pass, isStopRequested: isStopRequested)
        }
        try count(converted: current.converted, remaining: left, into: &current, state: &state, on: connection)
        if left == 0 { return nil }
        guard current.pass < options.maximumPasses else { throw BackfillError.rowsStillLocked(left) }
        uncovered = []
        return [.whole]
    }

    /// Waits before pass `pass` over the keys of skipped rows, so that the transactions that held
    /// them can finish: 0.1 s before the second pass, twice as long before each next one, at
    /// most 2 s. A stop asked for meanwhile ends the wait.
    func waitBeforeRetrying(pass: Int, isStopRequested: () -> Bool) {
        let wait = Duration.milliseconds(min(2_000, 100 << min(pass - 2, 5)))
        let clock = ContinuousClock()
        let end = clock.now + wait
        while clock.now < end {
            if isStopRequested() { return }
            Thread.sleep(forTimeInterval: min(0.05, Double((end - clock.now) / .milliseconds(1)) / 1_000))
        }
    }
}
