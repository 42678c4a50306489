import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Whole migrations through the built `phase` binary against a real server.
@Suite("phase workflows", .timeLimit(.minutes(3)))
struct PhaseWorkflowTests {
    /// A store over the database, for the modern and legacy writers of the application.
    private func writers(_ db: WorkflowDatabase) async throws -> (legacy: LegacyDraftAdapter, modern: ModernDraftAdapter, pool: PostgresPool) {
        let pool = PostgresPool(configuration: db.database.configuration(applicationName: "workflow-app"), maximumConnections: 2)
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        return (LegacyDraftAdapter(storage: store), ModernDraftAdapter(storage: store), pool)
    }

    private func save(_ id: String, _ operation: String, expected: Int64, title: String, body: String = "") -> SaveDraft {
        SaveDraft(operationScope: "tenant", operationID: operation, draftID: id, expectedRevision: expected,
                  content: DraftContent(title: title, body: body))
    }

    @Test func theFullCycleKeepsEveryWriteReadableAtEveryPhase() async throws {
        let db = try await WorkflowDatabase.make("wf_full_cycle", rows: 250)
        #expect(try await db.phase("init").status == 0)
        #expect(try await db.oldApplicationWrites(id: "old-0", title: "Before expand") == "Before expand (edited)")

        // expand: v2 added; old SQL keeps working and is mirrored; seeded rows are still v1 only.
        let expand = try await db.phase("expand")
        #expect(expand.status == 0, "\(expand.diagnostics)")
        #expect(expand.output == "expand done: baseline -> expanded (epoch 1, writer legacy)\n")
        #expect(try await db.columns() == ["id", "title", "revision", "document"])
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 251)
        #expect(try await db.oldApplicationWrites(id: "old-1", title: "After expand") == "After expand (edited)")
        #expect(try await db.value(String.self, "SELECT document ->> 'title' FROM drafts WHERE id = 'old-1'") == "After expand (edited)")
        let app = try await writers(db)
        _ = try await app.modern.save(save("app-1", "op-1", expected: 0, title: "Modern", body: "Body"))
        #expect(try await db.value(String.self, "SELECT title FROM drafts WHERE id = 'app-1'") == "Modern")

        // switch modern
        let refused = try await db.phase("switch", "modern")
        #expect(refused.status == 3)
        #expect(refused.diagnostics.contains("check failed: live readers understand v2"))
        let switched = try await db.phase("switch", "modern", "--force-readers")
        #expect(switched.status == 0, "\(switched.diagnostics)")
        #expect(try await db.value(String.self, "SELECT writer_path FROM cutover.migration_state") == "modern")
        #expect(try await db.oldApplicationWrites(id: "old-2", title: "After switch") == "After switch (edited)")
        _ = try await app.legacy.save(save("app-1", "op-2", expected: 1, title: "Legacy edit"))
        #expect(try await db.value(String.self, "SELECT document ->> 'body' FROM drafts WHERE id = 'app-1'") == "Body")

        // backfill: every row gets a document agreeing with its title.
        let backfill = try await db.phase("backfill", "--batch-size", "40")
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document IS NULL") == 0)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts WHERE document ->> 'title' IS DISTINCT FROM title") == 0)
        #expect(try await db.value(Int.self, "SELECT backfill_converted FROM cutover.migration_state") == 251)
        let json = try await db.phase("--format", "json", "status")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], "\(json.output)")
        #expect(status["phase"] as? String == "backfilled", "\(json.output)")

        // contract: the v1 representation is gone; the modern writer works; the legacy one is refused.
        let contract = try await db.phase("contract", "--yes", "--window", "0s")
        #expect(contract.status == 0, "\(contract.diagnostics)")
        #expect(try await db.columns() == ["id", "revision", "document"])
        #expect(try await db.value(String.self, "SELECT phase FROM cutover.migration_state") == "contracted")
        _ = try await app.modern.save(save("app-1", "op-3", expected: 2, title: "After contract"))
        await #expect {
            try await app.legacy.save(save("app-1", "op-4", expected: 3, title: "Too late"))
        } throws: { error in
            "\(error)".contains("the legacy format is no longer stored")
        }
        await #expect(throws: PostgresError.self) { try await db.oldApplicationWrites(id: "old-3", title: "Broken now") }
        for target in ["switch", "expand", "contract"] {
            let rollback = try await db.phase("rollback", target)
            #expect(rollback.status == 3, "rollback \(target)")
            #expect(rollback.diagnostics.contains("contract is irreversible"), "rollback \(target): \(rollback.diagnostics)")
        }
        let history = try await db.phase("history")
        #expect(history.output.contains("contract (forward)  done"))
        #expect(history.output.contains("switch modern (forward)  refused"))
        await app.pool.shutdown()
    }

    @Test("rollback from each phase before contract loses no row", arguments: [1, 2, 3])
    func rollbackLosesNothing(stepsForward: Int) async throws {
        let db = try await WorkflowDatabase.make("wf_rollback_\(stepsForward)", rows: 50)
        #expect(try await db.phase("init").status == 0)
        let forward: [[String]] = [["expand"], ["switch", "modern", "--force-readers"], ["backfill"]]
        for arguments in forward.prefix(stepsForward) {
            let run = try await db.phase(arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        _ = try await db.oldApplicationWrites(id: "during", title: "Written meanwhile")
        let app = try await writers(db)
        _ = try await app.modern.save(save("modern-row", "op", expected: 0, title: "Modern meanwhile", body: "b"))
        let before = try await db.value(Int.self, "SELECT count(*) FROM drafts")
        let rollback = try await db.phase("rollback", stepsForward == 1 ? "expand" : "switch")
        #expect(rollback.status == 0, "\(rollback.diagnostics)")
        let expected = stepsForward == 1 ? "baseline" : "expanded"
        #expect(try await db.phaseName() == expected)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts") == before)
        #expect(try await db.value(String.self, "SELECT title FROM drafts WHERE id = 'modern-row'") == "Modern meanwhile")
        #expect(try await db.value(String.self, "SELECT title FROM drafts WHERE id = 'during'") == "Written meanwhile (edited)")
        #expect(try await db.value(String.self, "SELECT writer_path FROM cutover.migration_state") == "legacy")
        if stepsForward == 1 {
            #expect(try await db.columns() == ["id", "title", "revision"])
        }
        // The old application keeps working after the rollback.
        #expect(try await db.oldApplicationWrites(id: "after", title: "After rollback") == "After rollback (edited)")
        await app.pool.shutdown()
    }

    @Test func aSecondRunnerExits75NamingTheFirst() async throws {
        let db = try await WorkflowDatabase.make("wf_two_runners")
        #expect(try await db.phase("init").status == 0)
        let holder = try db.database.connect(applicationName: "lock-holder")
        try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE drafts IN ACCESS EXCLUSIVE MODE")
        let url = db.url
        // The first runner outlasts the test: it retries the lock until the holder lets go, however
        // long a loaded machine takes to start the second. The second gives up at its first lock
        // timeout, so a runner wrongly admitted beside the first fails at once instead of waiting.
        let first = try PhaseBinary.start(["expand", "--lock-timeout", "100ms", "--max-backoff", "200ms", "--max-retries", "1000"],
                                          databaseURL: url)
        try await waitUntilRunning(db)
        let second = try await db.phase("expand", "--max-retries", "0")
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE outcome = 'running'") == 1,
                "the first runner's step ended before the second runner was refused")
        #expect(second.status == 75)
        #expect(second.diagnostics.hasPrefix("Error: another phase runner is working on plan drafts: pid "))
        #expect(second.diagnostics.contains("(application_name cutover-phase, role "))
        try holder.execute(unsafeSQL: "COMMIT")
        let finished = try await onThread { try PhaseBinary.finish(first) }
        #expect(finished.status == 0, "\(finished.diagnostics)")
    }

    @Test func expandWaitsOutAnExclusiveLockWithoutMakingReadersQueue() async throws {
        let db = try await WorkflowDatabase.make("wf_exclusive")
        #expect(try await db.phase("init").status == 0)
        let holder = try db.database.connect(applicationName: "lock-holder")
        try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE drafts IN ACCESS EXCLUSIVE MODE")
        let expand = try PhaseBinary.start(["expand", "--lock-timeout", "200ms", "--max-backoff", "300ms", "--max-retries", "1000"], databaseURL: db.url)
        try await waitUntilRunning(db)
        // Expand has begun and meets the lock; it must wait it out, not fail. The holder lets go
        // once expand has been seen waiting for the lock and then no longer waiting: its lock
        // timeout fired at least once, however slowly a loaded machine runs it.
        let observer = try db.database.connect(applicationName: "lock-observer")
        let isWaiting = {
            try observer.query("SELECT count(*) AS n FROM pg_locks WHERE relation = 'drafts'::regclass AND NOT granted")[0]
                .decode(Int.self, "n") > 0
        }
        #expect(try await eventually(pause: .milliseconds(10)) { try isWaiting() }, "expand was never seen waiting for the lock")
        #expect(try await eventually(pause: .milliseconds(10)) { try !isWaiting() }, "expand never gave up its wait for the lock")
        try holder.execute(unsafeSQL: "COMMIT")
        let finished = try await onThread { try PhaseBinary.finish(expand) }
        #expect(finished.status == 0, "\(finished.diagnostics)")
        #expect(finished.diagnostics.contains("lock not available"))
        #expect(try await db.phaseName() == "expanded")
    }

    @Test("a runner killed mid-step leaves a state the next run finishes", arguments: ["expand", "contract"])
    func killedRunnerResumes(step: String) async throws {
        let db = try await WorkflowDatabase.make("wf_killed_\(step)")
        #expect(try await db.phase("init").status == 0)
        if step == "contract" {
            for arguments in [["expand"], ["switch", "modern", "--force-readers"], ["backfill"]] {
                #expect(try await db.phase(arguments).status == 0)
            }
        }
        let holder = try db.database.connect(applicationName: "lock-holder")
        try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE drafts IN SHARE UPDATE EXCLUSIVE MODE")
        let arguments = step == "contract" ? ["contract", "--yes", "--window", "0s"] : ["expand"]
        let runner = try PhaseBinary.start(arguments + ["--lock-timeout", "100ms", "--max-backoff", "200ms", "--max-retries", "1000"], databaseURL: db.url)
        try await waitUntilRunning(db)
        kill(runner.pid, SIGKILL)
        let killed = try await onThread { try PhaseBinary.finish(runner) }
        #expect(killed.status == 128 + SIGKILL)
        try holder.execute(unsafeSQL: "COMMIT")

        let status = try await db.phase("status")
        #expect(status.output.contains("interrupted: \(step)"), "\(status.output)")
        let rerun = try await db.phase(arguments)
        #expect(rerun.status == 0, "\(rerun.diagnostics)")
        #expect(rerun.output.contains("an interrupted earlier attempt was taken over and finished"))
        #expect(try await db.phaseName() == (step == "contract" ? "contracted" : "expanded"))
        let outcomes = try await db.sql { connection in
            try connection.query("SELECT outcome FROM cutover.phase_history WHERE step = \(step) ORDER BY id").map { try $0.decode(String.self, "outcome") }
        }
        #expect(outcomes == ["interrupted", "done"])
    }

    @Test func contractIsRefusedWhileALegacySessionIsConnected() async throws {
        let db = try await WorkflowDatabase.make("wf_legacy_session")
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"], ["backfill"]] {
            #expect(try await db.phase(arguments).status == 0)
        }
        let legacy = try db.database.connect(applicationName: "legacy-app-7")
        let refused = try await db.phase("contract", "--yes", "--window", "0s")
        #expect(refused.status == 3)
        #expect(refused.diagnostics.contains("check failed: no legacy session connected: expected none connected matching 'legacy-%', observed 1 connected: pid \(legacy.backendPID) (legacy-app-7)"))
        #expect(try await db.phaseName() == "backfilled")
        #expect(try await db.columns().contains("title"))
        withExtendedLifetime(legacy) {}
    }

    @Test func aChangedAppliedFileIsRefusedNamingTheStepAndFile() async throws {
        let db = try await WorkflowDatabase.make("wf_changed_file")
        let folder = TestScratch.url("drafts-plan")
        try FileManager.default.copyItem(at: PlanFolder.source, to: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await db.phase("--plan", folder.path, "init").status == 0)
        #expect(try await db.phase("--plan", folder.path, "expand").status == 0)
        let expandFile = folder.appendingPathComponent("expand.sql")
        try (String(contentsOf: expandFile, encoding: .utf8) + "\n-- edited after it was applied\n").write(to: expandFile, atomically: true, encoding: .utf8)
        let refused = try await db.phase("--plan", folder.path, "switch", "modern", "--force-readers")
        #expect(refused.status == 3)
        #expect(refused.diagnostics.contains("check failed: applied SQL unchanged"))
        #expect(refused.diagnostics.contains("expand step's expand.sql changed since it was applied"))
        #expect(try await db.phaseName() == "expanded")
    }

    @Test func aDryRunChangesNothing() async throws {
        let db = try await WorkflowDatabase.make("wf_dry_run")
        #expect(try await db.phase("init", "--dry-run").status == 0)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM pg_namespace WHERE nspname = 'cutover'") == 0)
        #expect(try await db.phase("init").status == 0)
        let dry = try await db.phase("expand", "--dry-run")
        #expect(dry.status == 0, "\(dry.diagnostics)")
        #expect(dry.output.hasPrefix("dry run of expand from phase baseline: nothing will be changed"))
        #expect(dry.output.contains("ALTER TABLE drafts\n    ADD COLUMN IF NOT EXISTS document jsonb;"), "\(dry.output)")
        #expect(try await db.phaseName() == "baseline")
        #expect(try await db.columns() == ["id", "title", "revision"])
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history") == 0)
    }

    /// Waits until a step is running, within a bound that only turns a hang into a failure.
    private func waitUntilRunning(_ db: WorkflowDatabase) async throws {
        let isRunning = try await eventually {
            try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE outcome = 'running'") == 1
        }
        if !isRunning { Issue.record("the runner never began its step") }
    }
}
