import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// A step retried after a lost reply, or asked for by two operators at once, happens once and
/// never goes further than asked: through the built `phase` binary.
@Suite("phase steps retried and raced", .timeLimit(.minutes(3)))
struct StepIdempotenceTests {
    /// A database on the modern writer, with drafts whose v2-only fields (body, tags) exist
    /// only in `document`.
    private func modernWithV2OnlyFields(_ label: String) async throws -> WorkflowDatabase {
        let db = try await WorkflowDatabase.make(label, rows: 40)
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            let run = try await db.phase(arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                UPDATE drafts SET document = jsonb_build_object('body', 'Only in v2 ' || id, 'tags', '["kept"]'::jsonb,
                                                                'title', title, 'version', 2),
                                  revision = revision + 1
                 WHERE id <= 'seed-000010'
                """)
        }
        return db
    }

    private func v2OnlyFieldsKept(_ db: WorkflowDatabase) async throws -> Int? {
        try await db.value(Int.self, """
            SELECT count(*) FROM drafts WHERE document ->> 'body' = 'Only in v2 ' || id AND document -> 'tags' = '["kept"]'
            """)
    }

    private func doneCount(_ db: WorkflowDatabase, _ step: String) async throws -> Int? {
        try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE step = '\(step)' AND outcome = 'done'")
    }

    @Test func aRollbackRetriedAfterItsCommitReplyWasLostUndoesNothingMore() async throws {
        let db = try await modernWithV2OnlyFields("idem_rollback_lost_reply")
        let (proxy, proxied) = try db.database.throughLossyProxy()
        defer { proxy.stop() }
        proxy.loseNextReplyToExplicitCommit()
        let first = try await onThread { try PhaseBinary.run(["rollback", "switch", "--reconnect-for", "0s"], databaseURL: proxied) }
        #expect(proxy.lostReplyCount == 1)
        #expect(first.status == 69, "\(first.diagnostics)")
        #expect(first.diagnostics.contains("run the same command again"))
        // The switch back did commit; the same command again reports it and changes nothing.
        // (Run once the server has ended the first one's sessions; until then it holds the plan.)
        let sessions = "FROM pg_stat_activity WHERE application_name = 'cutover-phase' AND datname = current_database()"
        let ended = try await eventually(within: .seconds(60), pause: .milliseconds(10)) {
            try await db.value(Int.self, "SELECT count(*) \(sessions)") == 0
        }
        if !ended {
            let left = try await db.value(String.self, "SELECT string_agg(pid || ' ' || state || ' ' || coalesce(wait_event, '-') || ': ' || query, '; ') \(sessions)")
            Issue.record("the first run's sessions did not end: \(left ?? "")")
            return
        }
        let retry = try await onThread { try PhaseBinary.run(["rollback", "switch"], databaseURL: proxied) }
        #expect(retry.status == 0, "\(retry.diagnostics)")
        #expect(retry.output.hasPrefix("switch legacy already done (epoch 3, by role "), "\(retry.output)")
        #expect(retry.output.contains("nothing changed: phase expanded, epoch 3, writer legacy"))
        #expect(try await db.phaseName() == "expanded")
        #expect(try await db.columns() == ["id", "title", "revision", "document"])
        #expect(try await v2OnlyFieldsKept(db) == 10)
        #expect(try await doneCount(db, "switch legacy") == 1)
        #expect(try await doneCount(db, "revert expand") == 0)
        let skipped = try await db.value(Int.self, "SELECT count(*) FROM cutover.phase_history WHERE outcome = 'skipped'")
        #expect(skipped == 1)
    }

    @Test func twoOperatorsRollingBackAtOnceRollBackOnce() async throws {
        let db = try await modernWithV2OnlyFields("idem_rollback_race")
        for round in 0..<3 {
            let url = db.url
            let runs = try await withThrowingTaskGroup(of: PhaseBinary.Run.self) { group in
                for _ in 0..<2 {
                    group.addTask { try await onThread { try PhaseBinary.run(["rollback", "switch"], databaseURL: url) } }
                }
                return try await group.reduce(into: [PhaseBinary.Run]()) { $0.append($1) }
            }
            // Each either did it, found it done, or found the other at work: never more.
            for run in runs {
                #expect(run.status == 0 || run.status == 75, "round \(round): \(run.status) \(run.diagnostics)")
            }
            #expect(runs.contains { $0.status == 0 && $0.output.hasPrefix("switch legacy done: modern -> expanded") })
            #expect(try await db.phaseName() == "expanded")
            #expect(try await db.columns() == ["id", "title", "revision", "document"])
            #expect(try await v2OnlyFieldsKept(db) == 10)
            #expect(try await doneCount(db, "switch legacy") == round + 1)
            #expect(try await doneCount(db, "revert expand") == 0)
            let forward = try await db.phase("switch", "modern", "--force-readers")
            #expect(forward.status == 0, "\(forward.diagnostics)")
        }
    }

    @Test func aStepBoundToAnEpochRefusesWhenThePlanMovedSince() async throws {
        let db = try await modernWithV2OnlyFields("idem_epoch")
        // Both saw epoch 2 (modern). One switches back; meanwhile another switches forward again.
        #expect(try await db.phase("rollback", "switch", "--epoch", "2").status == 0)
        #expect(try await db.phase("switch", "modern", "--force-readers", "--epoch", "3").status == 0)
        // The first one's retry is bound to what it saw: the plan moved since, by someone else.
        let retry = try await db.phase("rollback", "switch", "--epoch", "2")
        #expect(retry.status == 3, "\(retry.diagnostics)")
        #expect(retry.diagnostics.contains("the state moved since epoch 2: it is at phase modern, epoch 4, last changed by switch modern"))
        #expect(try await db.phaseName() == "modern")
        // Bound to the epoch its own switch left, it reports that switch done.
        let expand = try await db.phase("expand", "--epoch", "0")
        #expect(expand.status == 0, "\(expand.diagnostics)")
        #expect(expand.output.hasPrefix("expand already done (epoch 1, "))
        let dryRun = try await db.phase("rollback", "expand", "--dry-run", "--epoch", "4")
        #expect(dryRun.status == 3)
        #expect(dryRun.output.contains("refused: cannot revert expand in phase modern: revert expand runs from phase expanded; run switch legacy first"))
    }
}
