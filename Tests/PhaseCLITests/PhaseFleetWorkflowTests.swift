import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// Backfill, observation, comparison and the reader registry through the built `phase` binary.
@Suite("phase fleet workflows", .timeLimit(.minutes(3)))
struct PhaseFleetWorkflowTests {
    private func advance(_ db: WorkflowDatabase, _ steps: [[String]]) async throws {
        for arguments in [["init"]] + steps {
            let run = try await db.phase(arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
    }

    /// Every row has a document, and it is exactly what converting its title gives.
    private func expectEveryRowConverted(_ db: WorkflowDatabase) async throws {
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        let wrong = try await db.value(Int.self, """
            SELECT count(*) FROM drafts WHERE document <> jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', title, 'version', 2)
               AND id LIKE 'seed-%'
            """)
        #expect(wrong == 0)
    }

    @Test func aBackfillKilledMidwayResumesFromItsCursorAndConvertsEveryRowOnce() async throws {
        let db = try await WorkflowDatabase.make("fleet_backfill_kill", rows: 6000)
        try await advance(db, [["expand"], ["switch", "modern", "--force-readers"]])
        // 60 batches 200 ms apart: a dozen seconds of runway, so that a loaded machine that runs
        // this task late still kills the backfill midway.
        let started = try PhaseBinary.start(["backfill", "--batch-size", "100", "--batch-delay", "200ms"], databaseURL: db.url)
        // Killed once a few batches are in: midway, with most of the table still to go.
        #expect(try await eventually(pause: .milliseconds(10)) {
            try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state") ?? 0 >= 300
        })
        kill(started.pid, SIGKILL)
        #expect(try await onThread { try PhaseBinary.finish(started) }.status == 128 + SIGKILL)
        let convertedBefore = try #require(try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state"))
        // The cursor is the last key locked, as JSON: {"id": "…"}.
        let cursorAtKill = try #require(try await db.value(String.self, "SELECT backfill_cursor::jsonb ->> 'id' FROM cutover.migration_state"))
        #expect(convertedBefore > 0 && convertedBefore < 6000)
        // The rows converted are exactly those up to the cursor.
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NOT NULL AND id <= '\(cursorAtKill)'") == convertedBefore)
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM drafts WHERE document IS NOT NULL AND id > '\(cursorAtKill)'") == 0)

        let rerun = try await db.phase("backfill", "--batch-size", "500")
        #expect(rerun.status == 0, "\(rerun.diagnostics)")
        #expect(rerun.output.contains("an interrupted earlier attempt was taken over and finished"))
        #expect(try await db.value(Int64.self, "SELECT backfill_converted FROM cutover.migration_state") == 6000)
        try await expectEveryRowConverted(db)
        #expect(try await db.phaseName() == "backfilled")
    }

    @Test func backfillFinishesUnderOldAndNewWriters() async throws {
        let db = try await WorkflowDatabase.make("fleet_backfill_load", rows: 4000)
        try await advance(db, [["expand"], ["switch", "modern", "--force-readers"]])
        let database = db.database
        let stop = StopSignal()
        let written = WriteCounts()
        // The old application inserts and updates with plain SQL all the while.
        let oldApp = Task {
            try await onThread { () -> Int in
                let connection = try database.connect(applicationName: "old-app")
                var writes = 0
                while !stop.isRaised {
                    let id = "seed-" + String(format: "%06d", Int.random(in: 1...4000))
                    try connection.query("UPDATE drafts SET title = title || '+', revision = revision + 1 WHERE id = \(id)")
                    try connection.query("INSERT INTO drafts (id, title, revision) VALUES (\("old-\(writes)"), \("inserted"), \(Int64(1)))")
                    writes += 2
                    written.counts.withLock { $0.old = writes }
                }
                return writes
            }
        }
        // The new application saves through the modern writer.
        let newApp = Task {
            let pool = PostgresPool(configuration: database.configuration(applicationName: "new-app"), maximumConnections: 2)
            let writer = ModernDraftAdapter(storage: try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil))
            var saves = 0
            while !stop.isRaised {
                _ = try await writer.save(SaveDraft(operationScope: "t", operationID: "new-\(saves)", draftID: "new-\(saves)",
                                                    expectedRevision: 0, content: DraftContent(title: "new", body: "b")))
                saves += 1
                written.counts.withLock { $0.new = saves }
            }
            await pool.shutdown()
            return saves
        }
        // Both have written before the backfill starts, however slowly a loaded machine starts them.
        #expect(try await eventually(within: .seconds(120)) { written.counts.withLock { $0.old > 0 && $0.new > 0 } }, "the writers never began")
        let backfill = try await db.phase("backfill", "--batch-size", "200")
        stop.raise()
        let oldWrites = try await oldApp.value
        let newSaves = try await newApp.value
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        #expect(oldWrites > 0 && newSaves > 0)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document ->> 'title' IS DISTINCT FROM title") == 0)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE id LIKE 'new-%' AND document ->> 'body' <> 'b'") == 0)
    }

    @Test func backfillOnAnEmptyTableAndBesideExtraUniqueColumns() async throws {
        let empty = try await WorkflowDatabase.make("fleet_backfill_empty", rows: 0)
        try await advance(empty, [["expand"], ["switch", "modern", "--force-readers"], ["backfill"]])
        #expect(try await empty.phaseName() == "backfilled")

        let wide = try await WorkflowDatabase.make("fleet_backfill_unique", rows: 0)
        try await wide.sql { connection in
            try connection.execute(unsafeSQL: """
                ALTER TABLE drafts ADD COLUMN slug text UNIQUE, ADD COLUMN external_id bigint UNIQUE;
                INSERT INTO drafts (id, title, revision, slug, external_id)
                SELECT 'seed-' || lpad(n::text, 6, '0'), 'Seed ' || n, 1, 'slug-' || n, n FROM generate_series(1, 1500) n;
                """)
        }
        try await advance(wide, [["expand"], ["switch", "modern", "--force-readers"], ["backfill", "--batch-size", "250"]])
        try await expectEveryRowConverted(wide)
        #expect(try await wide.value(Int.self, "SELECT count(DISTINCT slug) FROM drafts") == 1500)
    }

    @Test func observeRollsBackOnceWhenAThresholdIsCrossedAndNeverOtherwise() async throws {
        let db = try await WorkflowDatabase.make("fleet_observe")
        try await advance(db, [["expand"], ["switch", "modern", "--force-readers"]])
        // Healthy modern traffic: nothing happens.
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'committed', 100);
            """) }
        let calm = try await db.phase("observe", "--auto-rollback", "--min-saves", "10")
        #expect(calm.status == 0, "\(calm.output)\(calm.diagnostics)")
        #expect(calm.output.contains("no threshold crossed"))
        #expect(try await db.phaseName() == "modern")
        // Then failures: 10 of 110 saves.
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'outcomeUnknown', 10);
            """) }
        let crossed = try await db.phase("observe", "--auto-rollback", "--min-saves", "10", "--max-error-rate", "5%")
        #expect(crossed.status == 0, "\(crossed.output)\(crossed.diagnostics)")
        #expect(crossed.output.contains("threshold crossed: modern error rate 9.1% is above 5.0% (10 of 110 saves)"))
        #expect(crossed.output.contains("switched back to legacy automatically"))
        #expect(try await db.phaseName() == "expanded")
        let again = try await db.phase("observe", "--auto-rollback", "--min-saves", "10", "--max-error-rate", "5%")
        #expect(again.status == 3)
        #expect(again.output.contains("no automatic rollback: the writer is not modern (phase expanded)"))
        let rollbacks = try await db.sql { connection in
            try connection.query("SELECT details ->> 'reason' AS reason FROM cutover.phase_history WHERE step = 'switch legacy'")
                .map { try $0.decode(String?.self, "reason") }
        }
        #expect(rollbacks.count == 1)
        #expect(rollbacks.first??.hasPrefix("automatic rollback: modern error rate 9.1%") == true)
    }

    @Test func observeFollowKeepsLookingWhileCalmAndRollsBackOnceAThresholdIsCrossed() async throws {
        let db = try await WorkflowDatabase.make("fleet_observe_follow")
        try await advance(db, [["expand"], ["switch", "modern", "--force-readers"]])
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'committed', 100);
            """) }
        let started = try PhaseBinary.start(["observe", "--follow", "--interval", "1s", "--auto-rollback",
                                             "--min-saves", "10", "--max-error-rate", "5%"], databaseURL: db.url)
        // While nothing is crossed it keeps looking, and says so each time.
        #expect(try await eventually(within: .seconds(60), pause: .milliseconds(100)) {
            try String(contentsOf: started.diagnostics, encoding: .utf8).components(separatedBy: "no threshold crossed").count - 1 >= 2
        }, "observe --follow did not look twice")
        #expect(try ChildProcess.exitStatus(of: started.pid) == nil, "observe --follow exited while nothing was crossed")
        #expect(try await db.phaseName() == "modern")

        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.outcome_log VALUES (date_trunc('minute', now()), 'modern', 'outcomeUnknown', 10);
            """) }
        let run = try await onThread { try PhaseBinary.finish(started, limit: .seconds(60)) }
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
        #expect(run.output.contains("threshold crossed: modern error rate 9.1% is above 5.0% (10 of 110 saves)"))
        #expect(run.output.contains("switched back to legacy automatically"))
        #expect(try await db.phaseName() == "expanded")
    }

    @Test func compareNamesACorruptedDocumentAndHidesValues() async throws {
        let db = try await WorkflowDatabase.make("fleet_compare", rows: 50)
        try await advance(db, [["expand"], ["switch", "modern", "--force-readers"], ["backfill"]])
        // Planted past the sync trigger, which would carry each document's title into `title`.
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                ALTER TABLE drafts DISABLE TRIGGER USER;
                UPDATE drafts SET document = '{"version": 2, "title": 5, "body": "", "tags": []}' WHERE id = 'seed-000007';
                UPDATE drafts SET document = jsonb_set(document, '{title}', '"Secret other title"') WHERE id = 'seed-000011';
                ALTER TABLE drafts ENABLE TRIGGER USER;
                """)
        }
        let hidden = try await db.phase("compare", "--sample", "1000")
        #expect(hidden.status == 3)
        // The document whose title is a number: its title column and the document disagree.
        #expect(hidden.output.contains("disagreement: key (id) = (seed-000007), column document\ndisagreement: key (id) = (seed-000007), column title\n"),
                "\(hidden.output)")
        #expect(hidden.output.contains("disagreement: key (id) = (seed-000011), column document\ndisagreement: key (id) = (seed-000011), column title\n"))
        #expect(hidden.output.contains("2 rows disagree in 4 columns (values hidden; --show-values prints them)"))
        #expect(!hidden.output.contains("Secret other title"))
        let shown = try await db.phase("compare", "--sample", "1000", "--show-values")
        #expect(shown.output.contains(#"disagreement: key (id) = (seed-000011), column title: from the modern columns "Secret other title", stored "Seed 11""#),
                "\(shown.output)")
        #expect(shown.output.contains(#"disagreement: key (id) = (seed-000007), column title: from the modern columns "5", stored "Seed 7""#))
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE step = 'compare'") == 0)
    }

    @Test func readersListsLiveAndStaleInstances() async throws {
        let db = try await WorkflowDatabase.make("fleet_readers_cli")
        #expect(try await db.phase("init").status == 0)
        try await db.sql { try $0.execute(unsafeSQL: """
            SELECT cutover.reader_heartbeat('web-1', 'web', '4.0', ARRAY['v1','v2'], 'secret of web-1 process');
            SELECT cutover.reader_heartbeat('cron-1', 'cron', '2.1', ARRAY['v1'], 'secret of cron-1 process');
            SELECT cutover.reader_heartbeat('batch-1', 'batch', '1.0', ARRAY['v1'], 'secret of batch-1 process');
            UPDATE cutover.readers SET last_seen_at = now() - interval '1 hour' WHERE instance_id = 'cron-1';
            UPDATE cutover.readers SET last_seen_at = now() - interval '70 seconds' WHERE instance_id = 'batch-1';
            """) }
        let run = try await db.phase("readers")
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("live  web-1  web 4.0  reads v1,v2  last seen ") == true)
        #expect(lines.first?.contains("no heartbeat") == false)
        // One whose heartbeats stopped (they fail, or it hangs) is late after half the staleness
        // limit, with the time of its last heartbeat; it still counts until the limit.
        let late = try #require(lines.first { $0.hasPrefix("late  batch-1  batch 1.0  reads v1  last seen ") })
        // The silence is counted up to when `readers` ran, however late a loaded machine ran it.
        let lateSilence = try #require(late.wholeMatch(of: /.*, no heartbeat for (\d+)s: heartbeats are missing/), "\(late)")
        #expect(Int(lateSilence.1).map { $0 >= 70 && $0 < 120 } == true, "\(late)")
        let stale = try #require(lines.last)
        #expect(stale.hasPrefix("stale cron-1  cron 2.1  reads v1  last seen "))
        let staleSilence = try #require(stale.wholeMatch(of: /.*, no heartbeat for (\d+)s/), "\(stale)")
        #expect(Int(staleSilence.1).map { $0 >= 3600 } == true, "\(stale)")

        let json = try await db.phase("--format", "json", "readers")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let readers = try #require(listed["readers"] as? [[String: Any]])
        #expect(readers.compactMap { $0["state"] as? String } == ["live", "late", "stale"])
        #expect(readers.compactMap { $0["live"] as? Bool } == [true, true, false])
    }
}

/// A flag one task raises and others read.
final class StopSignal: Sendable {
    private let flag = Mutex(false)
    func raise() { flag.withLock { $0 = true } }
    var isRaised: Bool { flag.withLock { $0 } }
}

/// What two writers have written so far, read by the test that waits for both to begin.
private final class WriteCounts: Sendable {
    let counts = Mutex((old: 0, new: 0))
}
