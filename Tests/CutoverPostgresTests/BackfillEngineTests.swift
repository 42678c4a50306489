import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// The built-in drafts plan's batch statement, run by `BackfillEngine` against real tables.
@Suite("Backfill engine")
struct BackfillEngineTests {
    /// A database after expand holding `rows` legacy drafts (`draft-01`, …, numbered on
    /// `width` digits) that are v1 only, with the migration state that the engine keeps its cursor in.
    static func expandedTable(_ label: String, rows: Int, width: Int = 2) async throws -> StoreDatabase {
        let db = try await StoreDatabase.make(label, layout: .baseline)
        try await db.sql { connection in
            try connection.query("""
                INSERT INTO drafts (id, title, revision)
                SELECT 'draft-' || lpad(n::text, CAST(\(width) AS int), '0'), 'Legacy ' || n, 1 FROM generate_series(1, \(rows)) AS n
                """)
            try DraftsPlan.declarative.expand(on: connection)
            try connection.query("INSERT INTO cutover.migration_state (plan, phase, writer_path) VALUES ('drafts', 'modern', 'modern')")
        }
        return db
    }

    static func engine(batchSize: Int, niceRatio: Double = 0, maximumPasses: Int = 20,
                       lockTimeout: Duration = .milliseconds(500),
                       throttle: PlanBackfillThrottle = PlanBackfillThrottle(targetBatchTime: .zero)) throws -> BackfillEngine {
        let source = try PlanSource.builtIn()
        let step = try #require(source.plan.step(.backfill)?.backfill)
        return try BackfillEngine(source, backfill: step,
                              options: .init(batchSize: batchSize, niceRatio: niceRatio, lockTimeout: lockTimeout,
                                             maximumPasses: maximumPasses, throttle: throttle))
    }

    private func storedDocuments(_ db: StoreDatabase) async throws -> [String: String] {
        try await db.sql { connection in
            var documents: [String: String] = [:]
            for row in try connection.query("SELECT id, document::text AS document FROM drafts WHERE document IS NOT NULL") {
                documents[try row.decode(String.self, "id")] = try row.decode(String.self, "document")
            }
            return documents
        }
    }

    private func state(_ db: StoreDatabase) async throws -> (cursor: String?, converted: Int64) {
        try await db.sql { connection in
            let row = try connection.query("SELECT backfill_cursor, backfill_converted FROM cutover.migration_state WHERE plan = 'drafts'")[0]
            return (try row.decode(String?.self, "backfill_cursor"), try row.decode(Int64.self, "backfill_converted"))
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func convertsEveryV1OnlyRowInBatchesAndKeepsTheDocumentsWritersGave() async throws {
        let db = try await Self.expandedTable("backfill_engine_batches", rows: 50)
        // Three rows a modern writer already gave a document of its own.
        let kept = #"{"body": "kept", "tags": ["x"], "title": "Mine", "version": 2}"#
        try await db.sql { connection in
            try connection.query("UPDATE drafts SET document = \(kept)::jsonb WHERE id IN ('draft-03', 'draft-10', 'draft-50')")
        }
        let engine = try Self.engine(batchSize: 7)
        let progress = try await onThread { try engine.run(on: db.database.connect()) }

        #expect(progress.converted == 47)
        #expect(progress.total == 47)
        // Seven batches of seven keys (the three converted rows among them), one of the last key,
        // then the empty one that ends the pass.
        #expect(progress.batches == 9)
        #expect(progress.pass == 1)
        let documents = try await storedDocuments(db)
        #expect(documents.count == 50)
        for n in 1...50 {
            let id = "draft-" + (n < 10 ? "0" : "") + String(n)
            let expected = [3, 10, 50].contains(n) ? kept
                : #"{"body": "", "tags": [], "title": "Legacy \#(n)", "version": 2}"#
            #expect(documents[id] == expected, "\(id)")
        }
        let (cursor, converted) = try await state(db)
        #expect(cursor == nil)
        #expect(converted == 47)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func skipsARowAnotherTransactionHoldsInsteadOfWaitingAndConvertsItOnALaterRun() async throws {
        let db = try await Self.expandedTable("backfill_engine_held_row", rows: 20)
        let holder = try db.database.connect()
        try holder.execute(unsafeSQL: "BEGIN")
        try holder.query("SELECT 1 FROM drafts WHERE id = 'draft-05' FOR UPDATE")

        // A lock timeout far longer than skipping takes: a batch that waited for the held row
        // instead of skipping it would end in that timeout, not in rows left for a later run.
        let engine = try Self.engine(batchSize: 4, maximumPasses: 2, lockTimeout: .seconds(15))
        let first = try await onThread { () -> String in
            do {
                try engine.run(on: db.database.connect())
                return "finished"
            } catch {
                return "\(error)"
            }
        }
        #expect(first == BackfillError.rowsStillLocked(1).description)
        var documents = try await storedDocuments(db)
        #expect(documents.count == 19)
        #expect(documents["draft-05"] == nil)

        try holder.execute(unsafeSQL: "ROLLBACK")
        let second = try await onThread { try engine.run(on: db.database.connect()) }
        #expect(second.converted == 20)
        documents = try await storedDocuments(db)
        #expect(documents["draft-05"] == #"{"body": "", "tags": [], "title": "Legacy 5", "version": 2}"#)
        #expect(try await state(db).converted == 20)
        await db.close()
    }

    @Test func thePauseAfterABatchIsTheFixedDelayPlusTheNiceRatioOfTheBatchsTime() {
        let options = BackfillEngine.Options(batchDelay: .milliseconds(4), niceRatio: 0.25)
        let pause = options.pause(after: .milliseconds(40))
        #expect(pause > .microseconds(13_999) && pause < .microseconds(14_001), "\(pause)")
        #expect(options.pause(after: .zero) == .milliseconds(4))
        #expect(BackfillEngine.Options(niceRatio: 1.5).pause(after: .milliseconds(10)) == .milliseconds(15))
        #expect(BackfillEngine.Options().pause(after: .seconds(3)) == .zero)
    }

    @Test func aPlansBackfillStepSetsTheBatchSizeAndTheNiceRatio() throws {
        let builtIn = BackfillEngine.Options(plan: try #require(try PlanSource.builtIn().plan.step(.backfill)?.backfill))
        #expect(builtIn.batchSize == 1000 && builtIn.niceRatio == 0)
        let manifest = """
            {"format": 2, "name": "items", "table": "public.items", "key": "id",
             "backfill": {"batchSize": 250, "niceRatio": 0.25},
             "operations": [{"alter_column": {"from": "amount", "to": {"name": "amount_cents", "type": "bigint"},
                                               "up": "round(amount * 100)", "down": "amount_cents / 100.0"}}]}
            """
        let step = try #require(try DeclarativePlan(manifest: Array(manifest.utf8)).compile().plan.step(.backfill)?.backfill)
        let pace = BackfillEngine.Options(plan: step)
        #expect(pace.batchSize == 250 && pace.niceRatio == 0.25)
        #expect(pace.batchDelay == .zero && pace.lockTimeout == BackfillEngine.Options().lockTimeout)
        #expect(pace.throttle == .standard && pace.throttle.targetBatchTime == .milliseconds(50))
        #expect(BackfillEngine.Options().throttle.targetBatchTime == .zero, "a pace made in code keeps its batch size unless told")
    }

    @Test(.timeLimit(.minutes(3)))
    func aNiceRatioRestsAfterEveryBatchInProportionToItsTime() async throws {
        let db = try await Self.expandedTable("backfill_engine_nice_ratio", rows: 20)
        let clock = ContinuousClock()
        let began = clock.now
        let nice = try await onThread { try Self.engine(batchSize: 5, niceRatio: 5).run(on: db.database.connect()) }
        let elapsed = clock.now - began
        #expect(nice.converted == 20 && nice.batches == 5)
        // Each of the four batches before the last is followed by a pause of five times its
        // time, so the run lasts at least the pauses and a fifth of them more for the batches.
        #expect(nice.paused > .zero)
        #expect(elapsed >= nice.paused * 1.2, "run \(elapsed), paused \(nice.paused)")
        #expect(try await storedDocuments(db).count == 20)
        await db.close()

        let eager = try await Self.expandedTable("backfill_engine_no_pause", rows: 20)
        let unpaused = try await onThread { try Self.engine(batchSize: 5).run(on: eager.database.connect()) }
        #expect(unpaused.converted == 20 && unpaused.paused == .zero)
        await eager.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func rowsTheApplicationConvertsAreCountedApartFromTheBackfillsAndNoneIsConvertedTwice() async throws {
        let db = try await Self.expandedTable("backfill_engine_by_application", rows: 60)
        let engine = try Self.engine(batchSize: 10)
        // A first run stopped after two batches: rows 1 to 20.
        let stop = StopFlag()
        let first = try await onThread { () -> String in
            do {
                try engine.run(on: db.database.connect(), isStopRequested: { stop.isRaised },
                               progress: { if $0.batches == 2 { stop.raise() } })
                return "finished"
            } catch {
                return "\(error)"
            }
        }
        #expect(first == BackfillError.stopped(converted: 20).description)
        // The old application edits rows 41 to 50 (the expand trigger converts them), the new one
        // writes row 55's document, and a row inserted now was never among those to convert.
        let written = #"{"body": "new", "tags": [], "title": "Modern 55", "version": 2}"#
        try await db.sql { connection in
            try connection.query("UPDATE drafts SET title = title || ' (edited)', revision = revision + 1 WHERE id BETWEEN 'draft-41' AND 'draft-50'")
            try connection.query("UPDATE drafts SET document = \(written)::jsonb, revision = revision + 1 WHERE id = 'draft-55'")
            try connection.query("INSERT INTO drafts (id, title, revision) VALUES ('draft-61', 'Legacy 61', 1)")
        }
        let between = try await db.sql { connection in
            let state = try #require(try MigrationState.load(plan: "drafts", on: connection))
            return (state, try engine.remaining(on: connection))
        }
        #expect(between.0.backfillInitialRemaining == 60 && between.0.backfillConverted == 20 && between.1 == 29)
        #expect(between.0.convertedByApplication(remaining: between.1) == 11)

        // The second run: after its first batch (rows 21 to 30) the old application edits rows 58 to 60.
        let reports = ProgressLog()
        let second = try await onThread {
            let editor = try db.database.connect()
            return try engine.run(on: db.database.connect(), progress: { progress in
                reports.append(progress)
                if progress.batches == 1 {
                    try? editor.query("UPDATE drafts SET title = title || ' (edited)' WHERE id BETWEEN 'draft-58' AND 'draft-60'")
                }
            })
        }
        let start = try #require(reports.all.first)
        #expect(start.convertedBefore == 20 && start.total == 49 && start.convertedByApplication == 11)
        #expect(second.converted == 46 && second.total == 46 && second.convertedByApplication == 14, "\(second)")
        #expect(second.converted + second.convertedByApplication == 60)
        let documents = try await storedDocuments(db)
        #expect(documents.count == 61)
        #expect(documents["draft-55"] == written, "the backfill leaves a row the application converted as it was")
        #expect(documents["draft-45"] == #"{"body": "", "tags": [], "title": "Legacy 45 (edited)", "version": 2}"#)
        #expect(documents["draft-59"] == #"{"body": "", "tags": [], "title": "Legacy 59 (edited)", "version": 2}"#)
        #expect(try await state(db).converted == 46)
        await db.close()
    }
}

/// A stop the test raises from the engine's progress callback.
private final class StopFlag: Sendable {
    private let raised = Mutex(false)
    var isRaised: Bool { raised.withLock { $0 } }
    func raise() { raised.withLock { $0 = true } }
}

/// Every progress the engine reported, in order.
private final class ProgressLog: Sendable {
    private let reports = Mutex<[BackfillEngine.Progress]>([])
    var all: [BackfillEngine.Progress] { reports.withLock { $0 } }
    func append(_ progress: BackfillEngine.Progress) { reports.withLock { $0.append(progress) } }
}
