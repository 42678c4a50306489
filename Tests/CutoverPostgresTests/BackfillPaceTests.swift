import Cutover
@testable import CutoverPostgres
import Testing

/// The pace a backfill's workers share, without a server: one batch size that follows every
/// worker's batches, one check at a time whose answer every worker waits for, and holds counted
/// once for the whole.
@Suite("Backfill pace shared by workers")
struct BackfillPaceTests {
    /// The pace of fixed-delay-free, unthrottled batches of 1,000 rows aiming at 100 ms.
    static func pace(workers: Int, niceRatio: Double = 0) -> BackfillPace {
        var pace = BackfillPace(BackfillEngine.Options(batchSize: 1000, niceRatio: niceRatio,
                                                       throttle: PlanBackfillThrottle(targetBatchTime: .milliseconds(100))))
        pace.share(among: workers)
        return pace
    }

    @Test func workersRecordingTheirBatchesThroughThePaceShareOneSize() {
        var pace = Self.pace(workers: 2)
        var progress = BackfillEngine.Progress(converted: 0, total: 0, batches: 0, pass: 1)
        _ = pace.record(rows: 1000, time: .milliseconds(200), endedRange: false)
        _ = pace.record(rows: 1000, time: .milliseconds(200), endedRange: false)
        pace.apply(to: &progress)
        #expect(progress.batchSize == 500 && progress.lastBatchTime == .milliseconds(200), "\(progress)")
        let rest = pace.record(rows: 500, time: .milliseconds(50), endedRange: false)
        pace.apply(to: &progress)
        #expect(progress.batchSize == 600 && progress.lastBatchTime == .milliseconds(50) && rest == .zero, "\(progress)")
    }

    @Test func oneWorkerChecksForAllWhileTheOthersWaitAndItsHoldCountsOnce() {
        var pace = Self.pace(workers: 3)
        let start = ContinuousClock.now
        #expect(pace.turn(at: start) == .check, "the first worker checks")
        // The throttle holds the backfill; the other two workers come for their first batch.
        pace.holds("the throttle query answered true")
        #expect(pace.turn(at: start + .milliseconds(10)) == .wait)
        #expect(pace.turn(at: start + .seconds(2)) == .wait, "no worker goes on while the check holds")
        var progress = BackfillEngine.Progress(converted: 0, total: 0, batches: 0, pass: 1)
        pace.apply(to: &progress)
        #expect(progress.holdReason == "the throttle query answered true" && progress.throttleWaits == 0)
        // The throttle lets go after 3 s: all three go on together, on one answer.
        pace.throttleLetGo(reason: "the throttle query answered true", after: .seconds(3))
        pace.checked(at: start + .seconds(3))
        #expect(pace.turn(at: start + .seconds(3)) == .go)
        #expect(pace.turn(at: start + .seconds(3)) == .go)
        pace.apply(to: &progress)
        // Three workers held for 3 s: the backfill was held once, for 3 s of wall time.
        #expect(progress.throttleWaits == 1 && progress.throttled == .seconds(3) && progress.holdReason == nil, "\(progress)")
        #expect(progress.lastThrottleReason == "the throttle query answered true")
        // The answer stood for three batches, one a worker: the next batch is checked again.
        #expect(pace.turn(at: start + .seconds(3)) == .check)
    }

    @Test func anAnswerStandsNoLongerThanOneWorkersBatchAndRest() {
        var pace = Self.pace(workers: 4, niceRatio: 1)
        let start = ContinuousClock.now
        #expect(pace.turn(at: start) == .check)
        pace.checked(at: start)
        // A batch of 40 ms and its rest of 40 ms: an answer stands for 80 ms.
        #expect(pace.record(rows: 1000, time: .milliseconds(40), endedRange: false) == .milliseconds(40))
        #expect(pace.turn(at: start + .milliseconds(79)) == .go)
        #expect(pace.turn(at: start + .milliseconds(80)) == .check, "batches were left, but the answer is one worker's cycle old")
        #expect(pace.turn(at: start + .milliseconds(80)) == .wait)
        pace.checkFailed()
        #expect(pace.turn(at: start + .milliseconds(81)) == .check, "a check that failed leaves the turn to the next worker")
    }

    @Test func oneWorkerChecksBeforeEveryBatch() {
        var pace = Self.pace(workers: 1)
        let start = ContinuousClock.now
        for batch in 0..<3 {
            let now = start + .milliseconds(batch)
            #expect(pace.turn(at: now) == .check)
            pace.checked(at: now)
            _ = pace.record(rows: 1000, time: .seconds(10), endedRange: false)
        }
    }
}
