import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The built-in declarative drafts plan does what the format-1 plan of hand-written SQL did:
/// the same statements, old and new, sent at every phase of the same walk (a rollback drill
/// included) leave the same rows under either, and the legacy-activity record contract's check
/// reads is kept under the same key.
@Suite("The declarative drafts plan behaves as the format-1 one", .timeLimit(.minutes(3)))
struct DraftsPlanEquivalenceTests {
    /// What the old application and the modern store send, as plain SQL, in one phase.
    static func writes(_ phase: String) -> String {
        let document = { (title: String, body: String) in
            #"'{"body": "\#(body)", "tags": ["t"], "title": "\#(title)", "version": 2}'::jsonb"#
        }
        return """
            INSERT INTO drafts (id, title, revision) VALUES ('legacy-\(phase)', 'Legacy \(phase)', 1);
            UPDATE drafts SET title = 'Edited in \(phase)', revision = revision + 1 WHERE id = 'seed-0001';
            UPDATE drafts SET title = title WHERE id = 'seed-0002';
            UPDATE drafts SET revision = revision + 1 WHERE id = 'seed-0003';
            INSERT INTO drafts (id, title, revision, document)
            VALUES ('modern-\(phase)', 'Modern \(phase)', 1, \(document("Modern \(phase)", "Body of \(phase)")));
            UPDATE drafts SET title = 'Saved in \(phase)', document = \(document("Saved in \(phase)", "Kept")), revision = revision + 1
             WHERE id = 'seed-0004';
            UPDATE drafts SET title = 'Legacy edit in \(phase)', revision = revision + 1 WHERE id = 'seed-0004';
            INSERT INTO drafts (id, title, revision) VALUES ('seed-0005', 'Upserted in \(phase)', 1)
                ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, revision = drafts.revision + 1;
            DELETE FROM drafts WHERE id = 'seed-0006';
            """
    }

    /// Every row as both representations show it, in key order.
    static func rows(_ connection: PostgresConnection) throws -> [String] {
        let hasTitle = try connection.query("""
            SELECT count(*) AS n FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attname = 'title' AND NOT attisdropped
            """)[0].decode(Int.self, "n") == 1
        return try connection.query(PostgresQuery(unsafeSQL: """
            SELECT id || ' ' || revision || ' ' || \(hasTitle ? "title" : "'-'") || ' ' || coalesce(document::text, 'NULL') AS line
              FROM drafts ORDER BY id
            """)).map { try $0.decode(String.self, "line") }
    }

    /// The walk under `plan`: the rows after each step's writes, and whether a legacy write was seen.
    static func walk(_ plan: DraftsPlan) async throws -> (rows: [[String]], legacySeen: Bool) {
        let database = try await PlanFixtures.baseline("drafts_equivalence_\(plan.rawValue)", rows: 8)
        return try await onThread {
            let connection = try database.connect()
            var options = PhaseRunner.Options()
            options.forceReaders = true
            options.modernWriterWindow = .zero
            let runner = PhaseRunner(connection: connection, source: try plan.source(), options: options)
            var snapshots: [[String]] = []
            var legacySeen = false
            let walk: [(PhaseStep, String)] = [(.expand, "expanded"), (.switchModern, "modern"), (.backfill, "backfilled"),
                                               (.switchLegacy, "drill"), (.switchModern, "modern_again"), (.backfill, "backfilled_again")]
            for (step, phase) in walk {
                try runner.run(step)
                try connection.execute(unsafeSQL: writes(phase))
                snapshots.append(try rows(connection))
            }
            legacySeen = try connection.query("""
                SELECT last_write_at > '-infinity' AS seen FROM cutover.legacy_activity WHERE table_name = \(runner.plan.table)
                """).first?.decode(Bool.self, "seen") ?? false
            // Contract's own check of the legacy writes reads that record: a write just now refuses it.
            var strict = options
            strict.modernWriterWindow = .seconds(3600)
            let refusal = #expect(throws: StepRefusal.self) {
                try PhaseRunner(connection: connection, source: try plan.source(), options: strict).run(.contract)
            }
            #expect(refusal?.failedChecks.map(\.name).contains("no legacy write within the window") == true, "\(plan)")
            try runner.run(.backfill)
            try runner.run(.contract)
            snapshots.append(try rows(connection))
            return (snapshots, legacySeen)
        }
    }

    /// A database the format-1 plan expanded is not taken over silently by the declarative
    /// plan: its next step is refused, naming the files applied that the plan no longer has.
    @Test func anExpandAppliedByTheFormatOnePlanRefusesTheDeclarativePlansNextStep() async throws {
        let database = try await PlanFixtures.baseline("drafts_equivalence_upgrade", rows: 3)
        try await onThread {
            let connection = try database.connect()
            var options = PhaseRunner.Options()
            options.forceReaders = true
            try PhaseRunner(connection: connection, source: try DraftsPlan.formatOne.source(), options: options).run(.expand)
            let runner = PhaseRunner(connection: connection, source: try DraftsPlan.declarative.source(), options: options)
            let refusal = #expect(throws: StepRefusal.self) { try runner.run(.switchModern) }
            let unchanged = try #require(refusal?.failedChecks.first { $0.name == "applied SQL unchanged" })
            for file in ["expand.sql", "expand_index.sql"] {
                #expect(unchanged.observed.contains("expand step's \(file) is no longer in the plan"), "\(unchanged.observed)")
            }
            #expect(try runner.state().phase == .expanded)
            #expect(try MigrationState.load(plan: "drafts", on: connection)?.writerPath == .legacy)
        }
    }

    @Test func theSameWritesLeaveTheSameRowsAtEveryPhase() async throws {
        async let declarative = Self.walk(.declarative)
        async let formatOne = Self.walk(.formatOne)
        let (new, old) = try await (declarative, formatOne)
        #expect(new.rows.count == old.rows.count)
        for (index, (newRows, oldRows)) in zip(new.rows, old.rows).enumerated() {
            #expect(newRows == oldRows, "after step \(index + 1)")
        }
        #expect(new.legacySeen && old.legacySeen)
        // What the drafts semantics ask, seen in the rows: a legacy edit of a v2-written draft
        // keeps the fields v1 does not know, and a v1-only row is converted with the defaults.
        let last = try #require(new.rows.last)
        #expect(last.contains(#"seed-0004 13 - {"body": "Kept", "tags": ["t"], "title": "Legacy edit in backfilled_again", "version": 2}"#),
                "\(last)")
        #expect(last.contains(#"seed-0007 1 - {"body": "", "tags": [], "title": "Seed 7", "version": 2}"#), "\(last)")
    }
}
