import CutoverPostgres
@testable import PhaseCLI
import Testing

/// What `phase status` shows of a running backfill, read from its history row's report: with
/// its total, and while a table too large to count before the first batch is being counted.
@Suite("A running backfill's status line")
struct BackfillRunLineTests {
    private static func report(total: String, byApplication: String) throws -> BackfillRunReport {
        try #require(BackfillRunReport.from(details: """
            {"backfill": {"converted": 400, "convertedBefore": 100, "total": \(total), "convertedByApplication": \(byApplication),
                          "batches": 3, "workers": 1, "batchSize": 100, "targetBatchMs": 0, "niceRatio": 0, "rowsPerSecond": 100,
                          "elapsedMs": 3000, "throttledMs": 0, "pausedMs": 0, "replicaWaitedMs": 0, "updatedAt": "now"}}
            """))
    }

    @Test func aCountedBackfillShowsItsTotalAndTimeLeft() throws {
        let run = try Self.report(total: "1000", byApplication: "20")
        #expect(run.secondsLeft == 6)
        let line = StatusResult.backfillRunLine(run, isRunning: true)
        #expect(line.hasPrefix("backfill running: 400 of 1000 rows converted (300 in this run, 20 more by the application's writes), "
                               + "100 rows/s, ETA 6s; batches of 100 rows (fixed)"), "\(line)")
        #expect(StatusResult.backfillRunJSON(run).text().contains(#""total":1000"#))
    }

    @Test func aBackfillNotCountedYetShowsNoTotalNorTimeLeft() throws {
        let run = try Self.report(total: "null", byApplication: "null")
        #expect(run.total == nil && run.secondsLeft == nil)
        let line = StatusResult.backfillRunLine(run, isRunning: true)
        #expect(line.hasPrefix("backfill running: 400 rows converted (300 in this run), 100 rows/s, "
                               + "the rows still to convert not counted yet; batches of 100 rows (fixed)"), "\(line)")
        let json = StatusResult.backfillRunJSON(run).text()
        #expect(json.contains(#""total":null"#) && json.contains(#""secondsLeft":null"#), "\(json)")
    }
}
