import Cutover
import CutoverPostgres
import Foundation
import Testing

/// A declarative plan begun by one Cutover goes on under another that compiles the same
/// declaration into other SQL: its compiled parts may differ from those pinned when the plan
/// began, while its declaration and compiler compatibility are pinned and unchanged. What the
/// operator wrote (the declaration, a hand-written file) may not change, a changed compiler
/// compatibility is refused, and a plan pinned before its declaration was goes on only with
/// `--accept-recompiled-plan`, which the history records (a plan of SQL files: PlanPinningTests).
///
/// An earlier compiler is simulated by recording, for some compiled files, the checksum of other
/// text than this version compiles.
@Suite(.timeLimit(.minutes(3)))
struct PlanUpgradeTests {
    private static let manifest = """
        {"format": 2, "name": "orders", "table": "orders", "key": "id",
         "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint", "notNull": true},
           "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
           "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}]}
        """

    /// A database with `orders` and a folder holding `files` (the declarative plan when not
    /// given), after `init` and `expand`.
    private func expanded(_ label: String, files: [String: String] = ["plan.json": manifest]) async throws -> (WorkflowDatabase, PlanFolder) {
        let db = try await WorkflowDatabase.make(label, rows: 1)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO orders VALUES (1, 'new'), (2, 'paid')
                """)
        }
        let folder = try PlanFolder.make(label, files: files)
        try await db.phaseSucceeds(folder, ["init"], ["expand"])
        return (db, folder)
    }

    /// Records for `files` what an earlier compiler made of the same declaration: other text,
    /// in the plan's pins and in the records of the steps that applied them.
    private func compiledByAnEarlierCutover(_ db: WorkflowDatabase, _ files: [String]) async throws {
        try await db.sql { connection in
            for file in files {
                try connection.query("""
                    UPDATE cutover.applied_files
                       SET checksum = encode(sha256(convert_to(file || ' as an earlier Cutover compiled it', 'UTF8')), 'hex')
                     WHERE plan = 'orders' AND file = \(file)
                    """)
            }
        }
    }

    /// The checksum recorded in the plan's pins for `part`.
    private func pinned(_ db: WorkflowDatabase, _ part: String) async throws -> String? {
        try await db.sql { connection in
            try connection.query("SELECT checksum FROM cutover.applied_files WHERE plan = 'orders' AND step = 'plan' AND file = \(part)")
                .first?.decode(String.self, "checksum")
        }
    }

    /// The sha256 of `text`, as the runner takes it.
    private func checksum(_ db: WorkflowDatabase, _ text: String) async throws -> String {
        try await db.sql { try $0.query("SELECT encode(sha256(convert_to(\(text), 'UTF8')), 'hex') AS sum")[0].decode(String.self, "sum") }
    }

    /// Runs `switch modern` with `flags` and expects it refused by "applied SQL unchanged", saying each of `words`.
    private func expectRefused(_ db: WorkflowDatabase, _ folder: PlanFolder, flags: [String] = [], saying words: [String]) async throws {
        try await db.expectRefusedByPins(folder, plan: "orders", flags: flags, saying: words)
    }

    @Test func aPlanCompiledAgainFromItsPinnedDeclarationGoesOnAndIsPinnedAsCompiledNow() async throws {
        let (db, folder) = try await expanded("upgrade_recompiled")
        defer { folder.remove() }
        try await compiledByAnEarlierCutover(db, ["compiled/expand.sql", "compiled/backfill_remaining.sql"])
        let switched = try await db.phase("--plan", folder.path, "switch", "modern", "--force-readers")
        #expect(switched.status == 0, "\(switched.diagnostics)")
        let said = switched.output + switched.diagnostics
        #expect(said.contains("applied SQL unchanged: unchanged declaration; 2 compiled files differ "
                              + "from what Cutover compiled when the plan began (compiled again from the same declaration by this "
                              + "version): compiled/expand.sql, compiled/backfill_remaining.sql"), "\(said)")

        // The pins are now this version's; expand's record keeps what ran.
        let texts = try PlanSource.folder(folder.path).files
        for file in ["compiled/expand.sql", "compiled/backfill_remaining.sql"] {
            #expect(try await pinned(db, file) == (try await checksum(db, texts[file] ?? "")), "\(file)")
        }
        let backfilled = try await db.phase("--plan", folder.path, "backfill")
        #expect(backfilled.status == 0, "\(backfilled.diagnostics)")
        #expect((backfilled.output + backfilled.diagnostics).contains(
            "applied SQL unchanged: unchanged declaration; 1 compiled file differs from what Cutover compiled when the plan began "
                + "(compiled again from the same declaration by this version): compiled/expand.sql"), "\(backfilled.output)")
        let contracted = try await db.phase("--plan", folder.path, "contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(try await db.value(Int.self, "SELECT sum(status_code)::int FROM orders") == 3)
    }

    @Test func aContractStoppedHalfWayByAnEarlierCutoverGoesOnWithoutRunningItsFirstFileAgain() async throws {
        let (db, folder) = try await expanded("upgrade_half_contract")
        defer { folder.remove() }
        try await db.phaseSucceeds(folder, ["switch", "modern", "--force-readers"], ["backfill"])
        // An earlier Cutover's contract applied its first file, a NOT VALID constraint that
        // cannot be added twice, and stopped.
        let source = try PlanSource.folder(folder.path)
        let first = try await db.sql { connection in
            let file = try #require(source.plan.step(.contract)?.apply(onServerVersionNumber: connection.serverVersion).first)
            try connection.execute(unsafeSQL: source.text(file.path))
            try connection.query("""
                INSERT INTO cutover.applied_files (plan, step, file, checksum)
                VALUES ('orders', 'contract', \(file.path), encode(sha256(convert_to('as an earlier Cutover compiled it', 'UTF8')), 'hex'))
                """)
            return file.path
        }
        let contracted = try await db.phase("--plan", folder.path, "contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(contracted.diagnostics.contains("1 compiled file differs from what Cutover compiled when the plan began "
                                                + "(compiled again from the same declaration by this version): \(first)"), "\(contracted.diagnostics)")
        #expect(contracted.diagnostics.contains("\(first) was applied already (as Cutover compiled it then); skipping it"))
        #expect(try await db.phaseName(plan: "orders") == "contracted")
    }

    @Test func aChangedDeclarationIsRefusedNamingItEvenWithTheFlag() async throws {
        let (db, folder) = try await expanded("upgrade_declaration")
        defer { folder.remove() }
        try await compiledByAnEarlierCutover(db, ["compiled/expand.sql"])
        try folder.editManifest { $0.replacingOccurrences(of: "WHEN 'paid' THEN 2 END", with: "WHEN 'paid' THEN 2 ELSE 0 END") }
        try await expectRefused(db, folder, flags: ["--accept-recompiled-plan"], saying: [
            "plan.json: declaration changed since the plan began",
            "expand step's compiled/expand.sql changed since it was applied",
            "restore the plan as it was applied",
        ])
    }

    @Test func aChangedCompilerCompatibilityIsRefusedNamingBothNumbers() async throws {
        let (db, folder) = try await expanded("upgrade_compatibility")
        defer { folder.remove() }
        let now = CompiledPlan.compatibility
        try await db.sql { connection in
            try connection.query("""
                UPDATE cutover.applied_files SET file = \(PlanPins.compatibilityPart(now - 1))
                 WHERE plan = 'orders' AND step = 'plan' AND file = \(PlanPins.compatibilityPart(now))
                """)
        }
        try await expectRefused(db, folder, flags: ["--accept-recompiled-plan"], saying: [
            "observed compiler compatibility \(now - 1) when the plan began, \(now) in this Cutover",
            "finish the migration with the Cutover version that began it, or roll it back to baseline with that version",
        ])
    }

    @Test func pinsRecordedBeforeTheDeclarationWasPinnedGoOnOnlyWithTheFlagWhichTheHistoryRecords() async throws {
        let (db, folder) = try await expanded("upgrade_unpinned")
        defer { folder.remove() }
        let compatibility = PlanPins.compatibilityPart(CompiledPlan.compatibility)
        try await db.sql { connection in
            try connection.query("""
                DELETE FROM cutover.applied_files WHERE plan = 'orders' AND step = 'plan' AND file IN (\(PlanPins.declarationPart), \(compatibility))
                """)
        }
        try await compiledByAnEarlierCutover(db, ["compiled/expand.sql"])
        try await expectRefused(db, folder, saying: [
            "expand step's compiled/expand.sql changed since it was applied",
            "the compiled SQL differs from what Cutover compiled when the plan began, likely because Cutover was upgraded since",
            "if plan.json is unchanged, run the step again with --accept-recompiled-plan",
        ])
        let accepted = try await db.phase("--plan", folder.path, "switch", "modern", "--force-readers", "--accept-recompiled-plan")
        #expect(accepted.status == 0, "\(accepted.diagnostics)")
        #expect((accepted.output + accepted.diagnostics).contains(
            "applied SQL unchanged: no declaration pinned when the plan began; 1 compiled file differs from what Cutover compiled then, "
                + "accepted with --accept-recompiled-plan (compiled again by this version): compiled/expand.sql"), "\(accepted.output)")
        #expect(try await db.value(String.self, """
            SELECT details ->> 'acceptedRecompiledPlan' FROM cutover.phase_history
             WHERE plan = 'orders' AND step = 'switch modern' AND outcome = 'done'
            """) == "true")
        // The declaration is pinned now: the next step needs no flag.
        #expect(try await pinned(db, PlanPins.declarationPart) != nil)
        #expect(try await pinned(db, compatibility) != nil)
        let backfilled = try await db.phase("--plan", folder.path, "backfill")
        #expect(backfilled.status == 0, "\(backfilled.diagnostics)")
        #expect(try await db.value(String.self, """
            SELECT details ->> 'acceptedRecompiledPlan' FROM cutover.phase_history
             WHERE plan = 'orders' AND step = 'backfill' AND outcome = 'done'
            """) == "false")
    }

    @Test func aHandWrittenFileOfADeclarativePlanChangedIsRefusedEvenWithTheFlag() async throws {
        let manifest = Self.manifest.replacingOccurrences(
            of: "\"operations\": [", with: "\"operations\": [{\"sql\": {\"contract\": [\"contract_note.sql\"]}}, ")
        let (db, folder) = try await expanded("upgrade_hand_written",
                                              files: ["plan.json": manifest, "contract_note.sql": "SELECT 1;\n"])
        defer { folder.remove() }
        try await compiledByAnEarlierCutover(db, ["compiled/expand.sql"])
        try folder.write("contract_note.sql", "SELECT 2;\n")
        try await expectRefused(db, folder, flags: ["--accept-recompiled-plan"], saying: ["contract_note.sql changed since the plan began"])
    }
}
