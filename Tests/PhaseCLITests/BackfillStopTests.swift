import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase backfill` stopped by a signal says where it stopped and how to go on; run again it
/// finishes from its cursor and counts this run's rows apart; a run with nothing left says so.
@Suite("phase backfill stopped and run again", .timeLimit(.minutes(3)))
struct BackfillStopTests {
    /// Takes `db` through expand and the switch, then runs `phase backfill` in fixed batches of
    /// 10 rows a tenth of a second apart and sends it `signal` once it has converted at least
    /// `rows`; returns the stopped run and the rows its cursor has passed.
    static func backfillStopped(_ db: WorkflowDatabase, by signal: Int32, afterConverting rows: Int64) async throws
        -> (run: PhaseBinary.Run, converted: Int64) {
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            let run = try await db.phase(step)
            #expect(run.status == 0, "\(step): \(run.diagnostics)")
        }
        let started = try PhaseBinary.start(["backfill", "--batch-size", "10", "--batch-delay", "100ms"], databaseURL: db.url)
        _ = try await db.sql { connection -> Int64 in
            while true {
                let converted = try connection.query("SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0]
                    .decode(Int64.self, "backfill_converted")
                if converted >= rows { return converted }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        kill(started.pid, signal)
        let stopped = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(stopped.status == 128 + signal, "\(stopped.diagnostics)")
        let converted = try #require(try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'"))
        return (stopped, converted)
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aStoppedBackfillSaysWhereItStoppedAndTheNextRunsFinishFromThere(signal: Int32) async throws {
        let db = try await WorkflowDatabase.make("backfill_stop_\(signal)", rows: 400)
        let (stopped, converted) = try await Self.backfillStopped(db, by: signal, afterConverting: 30)
        #expect(converted >= 30 && converted < 400)
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(stopped.diagnostics.split(separator: "\n").last.map(String.init)
                == "stopped by \(name) during backfill with \(converted) of 400 rows converted, its cursor saved with the last batch: run 'phase backfill' again to go on from there, or 'phase status'",
                "\(stopped.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NOT NULL") == converted,
                "the rows converted are those the cursor has passed")
        let status = try await db.phase("status")
        #expect(status.output.contains("backfill: \(converted) of 400 rows converted, \(400 - converted) still to convert"), "\(status.output)")

        let resumed = try await db.phase("backfill")
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        #expect(resumed.diagnostics.contains("backfill: 400/400 done (\(400 - converted) in this run) in "), "\(resumed.diagnostics)")
        let again = try await db.phase("backfill")
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.diagnostics.contains("backfill: 400/400 done before this run; this run found nothing left to do"), "\(again.diagnostics)")
        let done = try await db.phase("status")
        #expect(done.output.contains("backfill: 400 of 400 rows converted, none left to convert"), "\(done.output)")
    }

    @Test func rowsTheOldApplicationConvertsAreCountedApartInStatusAndInTheBackfillsLines() async throws {
        let db = try await WorkflowDatabase.make("backfill_by_application", rows: 100)
        let (stopped, converted) = try await Self.backfillStopped(db, by: SIGINT, afterConverting: 20)
        #expect(stopped.status == 130, "\(stopped.diagnostics)")
        // The old application's plain SQL edits ten rows the backfill has not reached (the expand
        // trigger converts them) and inserts one, which was never among the rows to convert.
        let edited = try #require(try await db.value(Int64.self, """
            WITH edited AS (
                UPDATE drafts SET title = title || ' (edited)', revision = revision + 1
                 WHERE id IN (SELECT id FROM drafts WHERE document IS NULL ORDER BY id DESC LIMIT 10)
                RETURNING 1)
            SELECT count(*) FROM edited
            """))
        #expect(edited == 10)
        _ = try await db.sql { try $0.query("INSERT INTO drafts (id, title, revision) VALUES ('added-later', 'Added', 1)") }
        let status = try await db.phase("status")
        #expect(status.output.contains("backfill: \(converted) of 90 rows converted, \(90 - converted) still to convert; "
                                       + "10 more converted by the application's own writes since it began"), "\(status.output)")
        let json = try await db.phase("--format", "json", "status")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let backfill = try #require(object["backfill"] as? [String: Any])
        #expect(backfill["convertedByApplication"] as? Int == 10 && backfill["total"] as? Int == 90, "\(json.output)")

        let resumed = try await db.phase("backfill")
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        #expect(resumed.diagnostics.contains("backfill: 90/90 done (\(90 - converted) in this run) in "), "\(resumed.diagnostics)")
        #expect(resumed.diagnostics.contains("backfill: 10 more rows converted by the application's own writes since the backfill began"),
                "\(resumed.diagnostics)")
        let done = try await db.phase("status")
        #expect(done.output.contains("backfill: 90 of 90 rows converted, none left to convert; 10 more converted by the application's own writes since it began"),
                "\(done.output)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document ->> 'title' LIKE '% (edited)'") == 10)
    }

    @Test func beforeExpandStatusSaysTheBackfillWaitsForExpand() async throws {
        let db = try await WorkflowDatabase.make("backfill_status_baseline", rows: 5)
        #expect(try await db.phase("init").status == 0)
        let status = try await db.phase("status")
        #expect(status.output.contains("backfill: not before expand, which adds the representation it fills"), "\(status.output)")
        #expect(!status.output.contains("0 of 0"), "\(status.output)")
    }

    @Test func aPauseFromAnotherTerminalHoldsTheBackfillUntilResumedAndEndsWithIt() async throws {
        let db = try await WorkflowDatabase.make("backfill_pause_cli", rows: 200)
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            #expect(try await db.phase(step).status == 0, "\(step)")
        }
        let paused = try await db.phase("backfill", "--pause")
        #expect(paused.status == 0, "\(paused.diagnostics)")
        #expect(paused.output.hasPrefix("backfill of plan drafts paused by "), "\(paused.output)")
        #expect(paused.output.contains(": no backfill runs now: the next one hears it before its first batch; 'phase backfill --resume' lets it go on"),
                "\(paused.output)")
        #expect(try await db.phase("status").output.contains("'phase backfill --resume' lets it go on"))

        let started = try PhaseBinary.start(["backfill", "--batch-size", "50"], databaseURL: db.url)
        let deadline = ContinuousClock.now + .seconds(60)
        while try !String(contentsOf: started.diagnostics, encoding: .utf8).contains("backfill paused by "), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NOT NULL") == 0, "no batch ran while paused")
        let status = try await db.phase("status")
        // Before its first batch the backfill has no figures to show yet: status names the step
        // running, the pause and the runner.
        let lines = status.output.split(separator: "\n").map(String.init)
        let runnerLine = lines.first { $0.hasPrefix("runner at work: pid ") }
        let pauseLine = lines.first { $0.hasPrefix("backfill paused by ") }
        #expect(lines.contains("  backfill   running") && runnerLine != nil && pauseLine != nil, "\(status.output)")
        let resumed = try await db.phase("backfill", "--resume")
        #expect(resumed.output.contains("resumed by ") && resumed.output.contains(": the backfill running (pid "), "\(resumed.output)")
        let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("backfill resumed by "), "\(run.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM cutover.backfill_control") == 0, "the pause ended with the backfill")
        let after = try await db.phase("status")
        #expect(!after.output.contains("paused by"), "\(after.output)")
        let history = try await db.phase("history")
        #expect(history.output.contains("pace: "), "\(history.output)")
        #expect(history.output.contains("200 rows converted in this run"), "\(history.output)")
    }

    @Test func severalWorkersFinishTheBackfillAsOneStepAndHistoryShowsThem() async throws {
        let db = try await WorkflowDatabase.make("backfill_workers_cli", rows: 600)
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            #expect(try await db.phase(step).status == 0, "\(step)")
        }
        let run = try await db.phase("backfill", "--workers", "3", "--batch-size", "40")
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("backfill: 3 workers over ") && run.diagnostics.contains("backfill: 600/600 done in "), "\(run.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM cutover.backfill_ranges") == 0, "the ranges end with the backfill")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM cutover.phase_history WHERE plan = 'drafts' AND step = 'backfill' AND outcome <> 'refused'") == 1,
                "one step in the history")
        let history = try await db.phase("history")
        #expect(history.output.contains("600 rows converted in this run at ") && history.output.contains(" rows/s on 3 workers; "), "\(history.output)")
        let json = try await db.phase("--format", "json", "history")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        let runs = entries.compactMap { $0["backfill"] as? [String: Any] }
        #expect(runs.count == 1 && runs.first?["workers"] as? Int == 3 && runs.first?["convertedThisRun"] as? Int == 600, "\(json.output)")
    }

    @Test func aPlanOfSQLFilesRefusesSeveralWorkers() async throws {
        let db = try await WorkflowDatabase.make("backfill_workers_format1", rows: 5)
        let plan = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1").path
        for step in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            #expect(try await db.phase(["--plan", plan] + step).status == 0, "\(step)")
        }
        let refused = try await db.phase("--plan", plan, "backfill", "--workers", "2")
        #expect(refused.status == 64, "\(refused.diagnostics)")
        #expect(refused.diagnostics.hasPrefix("Error: --workers needs a plan whose backfill divides its rows into key ranges"), "\(refused.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 5, "nothing converted")
        #expect(try await db.phase("--plan", plan, "backfill").status == 0)
    }

    @Test("--pause, --resume and --retune refuse what they cannot do", arguments: [
        (["backfill", "--pause", "--resume"], "Error: give one of --pause, --resume and --retune"),
        (["backfill", "--retune"], "Error: --retune needs at least one of --target-batch-time, --nice-ratio, --max-active-sessions and --max-replica-lag"),
        (["backfill", "--pause", "--nice-ratio", "1"], "Error: --pause and --resume take no pace: give it with --retune"),
        (["backfill", "--resume", "--workers", "2"], "Error: --workers is a backfill's own: give it when starting one"),
        (["backfill", "--workers", "65"], "Error: "),
    ])
    func controlUsage(arguments: [String], line: String) async throws {
        let run = try PhaseBinary.run(arguments)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.hasPrefix(line), "\(run.diagnostics)")
    }
}
