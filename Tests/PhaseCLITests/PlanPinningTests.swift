import Foundation
import Testing

/// Once a plan has begun, every part of it is pinned: its files, its checks, its steps' file
/// lists and its table. A change is refused by name before any later step, and the phase
/// stays, `--accept-recompiled-plan` or not; only tuning and messages may change; after
/// `rollback expand` the plan is free again.
@Suite(.timeLimit(.minutes(3)))
struct PlanPinningTests {
    /// A database with the gadgets table and the plan applied up to expand.
    private func expanded(_ label: String) async throws -> (WorkflowDatabase, PlanFolder) {
        let (db, folder) = try await GadgetsPlan.make(label)
        try await db.phaseSucceeds(folder, ["init"], ["expand"])
        return (db, folder)
    }

    /// Runs `switch modern` with `flags` and expects it refused, naming each of `changes`, with the phase kept.
    private func expectRefused(_ db: WorkflowDatabase, _ folder: PlanFolder, plan: String = "gadgets", flags: [String] = [],
                               naming changes: [String]) async throws {
        try await db.expectRefusedByPins(folder, plan: plan, flags: flags, saying: changes)
    }

    @Test func aCheckEditedAfterExpandIsRefusedNamingIt() async throws {
        let (db, folder) = try await expanded("pin_check")
        defer { folder.remove() }
        try folder.editManifest { $0.replacingOccurrences(of: "WHERE code IS NULL\", \"expect\": \"= 0\"", with: "WHERE false\", \"expect\": \"= 0\"") }
        try await expectRefused(db, folder, naming: [#"plan.json: contract step's check "every code set" changed since the plan began"#])
    }

    @Test func aCheckRemovedOrAddedAfterExpandIsRefusedNamingIt() async throws {
        let (db, folder) = try await expanded("pin_check_set")
        defer { folder.remove() }
        try folder.editManifest { $0.replacingOccurrences(of: "\"name\": \"every code set\"", with: "\"name\": \"codes set\"") }
        try await expectRefused(db, folder, naming: [
            #"plan.json: contract step's check "every code set" is no longer in the plan"#,
            #"plan.json: contract step's check "codes set" was added since the plan began"#,
        ])
    }

    @Test func aFileAddedToALaterStepOrChangedBeforeItRunsIsRefused() async throws {
        let (db, folder) = try await expanded("pin_files")
        defer { folder.remove() }
        try folder.write("contract_first.sql", "SELECT 1;\n")
        try folder.write("contract.sql", "ALTER TABLE gadgets DROP COLUMN IF EXISTS label CASCADE;\n")
        try folder.editManifest { $0.replacingOccurrences(of: "\"apply\": [\"contract.sql\"]", with: "\"apply\": [\"contract_first.sql\", \"contract.sql\"]") }
        try await expectRefused(db, folder, naming: [
            "plan.json: contract step's files changed since the plan began",
            "contract.sql changed since the plan began",
            "contract_first.sql was added since the plan began",
        ])
    }

    @Test func aChangedFileIsRefusedEvenWithTheFlagThatAcceptsRecompiledSQL() async throws {
        let (db, folder) = try await expanded("pin_files_flag")
        defer { folder.remove() }
        try folder.write("contract.sql", "ALTER TABLE gadgets DROP COLUMN IF EXISTS label CASCADE;\n")
        try await expectRefused(db, folder, flags: ["--accept-recompiled-plan"], naming: ["contract.sql changed since the plan began"])
    }

    @Test func theTableChangedIsRefused() async throws {
        let (db, folder) = try await expanded("pin_table")
        defer { folder.remove() }
        try folder.editManifest { $0.replacingOccurrences(of: "\"table\": \"gadgets\"", with: "\"table\": \"public.gadgets\"") }
        try await expectRefused(db, folder, naming: ["plan.json: table changed since the plan began"])
    }

    @Test func tuningAndMessagesMayChangeAndAFullRollbackFreesThePlan() async throws {
        let (db, folder) = try await expanded("pin_tuning")
        defer { folder.remove() }
        try folder.editManifest {
            $0.replacingOccurrences(of: "\"batchSize\": 100", with: "\"batchSize\": 7")
                .replacingOccurrences(of: "\"backfill first\"", with: "\"run phase backfill first\"")
        }
        let switched = try await db.phase("--plan", folder.path, "switch", "modern", "--force-readers")
        #expect(switched.status == 0, "\(switched.diagnostics)")
        for arguments in [["rollback", "switch"], ["rollback", "expand"]] {
            let run = try await db.phase(["--plan", folder.path] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.applied_files WHERE plan = 'gadgets'") == 0)
        try folder.write("expand.sql", "ALTER TABLE gadgets ADD COLUMN IF NOT EXISTS code bigint;\n")
        let again = try await db.phase("--plan", folder.path, "expand")
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(try await db.value(String.self, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'gadgets'::regclass AND attname = 'code'") == "bigint")
    }

    @Test func aDeclarativePlanWhoseOperationChangedIsRefusedNamingTheCompiledFiles() async throws {
        let db = try await WorkflowDatabase.make("pin_declarative", rows: 1)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO orders VALUES (1, 'new'), (2, 'paid')
                """)
        }
        let manifest = """
            {"format": 2, "name": "orders", "table": "orders", "key": "id",
             "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint", "notNull": true},
               "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END",
               "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' END"}}]}
            """
        let folder = try PlanFolder.make("pin_declarative", files: ["plan.json": manifest])
        defer { folder.remove() }
        try await db.phaseSucceeds(folder, ["init"], ["expand"])
        try folder.editManifest { $0.replacingOccurrences(of: "WHEN 'paid' THEN 2 END", with: "WHEN 'paid' THEN 2 ELSE 0 END") }
        try await expectRefused(db, folder, plan: "orders", naming: ["expand step's compiled/expand.sql changed since it was applied"])
    }
}
