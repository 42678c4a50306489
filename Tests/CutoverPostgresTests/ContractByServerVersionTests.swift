import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// Contract's SQL is chosen by the server's version: before PostgreSQL 18 a CHECK constraint
/// added NOT VALID, validated, then SET NOT NULL; from 18 the column's own NOT NULL constraint
/// added NOT VALID and validated. Run on each major (`CUTOVER_PG_BINDIR`), it checks that
/// major's path and what each leaves in the catalog.
@Suite("Contract by server version", .timeLimit(.minutes(3)))
struct ContractByServerVersionTests {
    /// A runner of the format-1 plan of SQL files, or of the plan in `folder`.
    private func runner(_ connection: PostgresConnection, plan folder: String? = nil) throws -> PhaseRunner {
        try runner(connection, source: try PlanSource.folder(folder ?? DraftsPlan.formatOneFolder))
    }

    private func runner(_ connection: PostgresConnection, source: PlanSource) -> PhaseRunner {
        var options = PhaseRunner.Options()
        options.forceReaders = true
        options.modernWriterWindow = .zero
        return PhaseRunner(connection: connection, source: source, options: options)
    }

    /// Contract's files on a server of 18 or later and before, and the NOT NULL constraint
    /// each plan names: the compiled files of the built-in plan, the format-1 plan's own.
    private static func contractFiles(_ plan: DraftsPlan, from18 isFrom18: Bool) -> (files: [String], constraint: String) {
        switch plan {
        case .declarative:
            (isFrom18 ? ["compiled/contract_not_null_pg18.sql", "compiled/contract_validate.sql", "compiled/contract_drop.sql"]
                : ["compiled/contract_not_null.sql", "compiled/contract_validate.sql", "compiled/contract_set_not_null.sql",
                   "compiled/contract_drop.sql"], "drafts_document_not_null")
        case .formatOne:
            (isFrom18 ? ["contract_constraint_not_null.sql", "contract_validate.sql", "contract_drop.sql"]
                : ["contract_constraint.sql", "contract_validate.sql", "contract_not_null.sql", "contract_drop.sql"],
             "drafts_document_present")
        }
    }

    /// The constraints of `drafts` on `document`: name, contype and whether validated.
    private func documentConstraints(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT c.conname || ' ' || c.contype::text || ' ' || CASE WHEN c.convalidated THEN 'valid' ELSE 'not valid' END AS line
              FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
             WHERE c.conrelid = 'drafts'::regclass AND a.attname = 'document' ORDER BY c.conname
            """).map { try $0.decode(String.self, "line") }
    }

    private func documentIsNotNull(_ connection: PostgresConnection) throws -> Bool {
        try connection.query("""
            SELECT attnotnull FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attname = 'document'
            """)[0].decode(Bool.self, "attnotnull")
    }

    @Test(arguments: DraftsPlan.allCases)
    func contractRunsThisServersFilesAndLeavesItsNotNullConstraint(_ plan: DraftsPlan) async throws {
        let database = try await PlanFixtures.baseline("contract_by_version_\(plan.rawValue)")
        try await onThread {
            let connection = try database.connect()
            let runner = self.runner(connection, source: try plan.source())
            let isNotNullConstraintVersion = connection.serverVersion >= 180_000
            let (expected, constraint) = Self.contractFiles(plan, from18: isNotNullConstraintVersion)
            #expect(runner.files(for: .contract).map(\.path) == expected)
            for step in [PhaseStep.expand, .switchModern, .backfill, .contract] { try runner.run(step) }
            let applied = try connection.query("""
                SELECT file FROM cutover.applied_files WHERE plan = 'drafts' AND step = 'contract' ORDER BY applied_at, file
                """).map { try $0.decode(String.self, "file") }
            #expect(applied == expected)
            #expect(try self.documentIsNotNull(connection))
            // PostgreSQL 18 keeps every NOT NULL in pg_constraint: here the validated one that
            // contract added. Before 18, SET NOT NULL is no constraint and the CHECK is gone.
            #expect(try self.documentConstraints(connection)
                == (isNotNullConstraintVersion ? ["\(constraint) n valid"] : []))
            #expect(throws: PostgresError.self) {
                try connection.query("INSERT INTO drafts (id, revision, document) VALUES ('no-document', 1, NULL)")
            }
        }
    }

    @Test func aStoppedContractsConstraintIsOfItsVersionsKindAndItsRevertRemovesIt() async throws {
        let database = try await PlanFixtures.baseline("contract_by_version_revert")
        let failing = try PlanFixtures.folder { $0["contract_validate.sql"] = "SELECT 1 / 0;" }
        try await onThread {
            let connection = try database.connect()
            // The plan whose contract fails from the start: a plan is pinned at its first step.
            let runner = try self.runner(connection, plan: failing)
            for step in [PhaseStep.expand, .switchModern, .backfill] { try runner.run(step) }
            #expect(throws: PostgresError.self) { try runner.run(.contract) }
            let isNotNullConstraintVersion = connection.serverVersion >= 180_000
            #expect(try self.documentConstraints(connection)
                == [isNotNullConstraintVersion ? "drafts_document_present n not valid" : "drafts_document_present c not valid"])
            // From 18 on, pg_attribute calls the column NOT NULL as soon as the constraint is
            // there, validated or not.
            #expect(try self.documentIsNotNull(connection) == isNotNullConstraintVersion)
            try runner.rollback(undoing: .contract)
            #expect(try self.documentConstraints(connection) == [])
            #expect(try !self.documentIsNotNull(connection))
        }
    }

    @Test("a file runs only on the majors its serverVersion names", arguments: [0, 1])
    func filesAreChosenByTheConnectedServer(offset: Int) async throws {
        let database = try await PlanFixtures.baseline("contract_by_version_choice_\(offset)")
        try await onThread {
            let connection = try database.connect()
            // A boundary at this server's major, or the next one: either way one marker runs.
            let boundary = connection.serverVersion / 10_000 + offset
            let folder = try PlanFixtures.folder { files in
                files["mark_before.sql"] = "CREATE TABLE ran_before ();"
                files["mark_from.sql"] = "CREATE TABLE ran_from ();"
                files["plan.json"] = files["plan.json"]!.replacingOccurrences(
                    of: #""apply": ["expand.sql", "#,
                    with: #""apply": [{"file": "mark_before.sql", "serverVersion": "< \#(boundary)"}, {"file": "mark_from.sql", "serverVersion": ">= \#(boundary)"}, "expand.sql", "#)
            }
            let runner = try self.runner(connection, plan: folder)
            #expect(runner.plan.sqlFilePaths.contains("mark_before.sql") && runner.plan.sqlFilePaths.contains("mark_from.sql"))
            try runner.run(.expand)
            let tables = try connection.query("""
                SELECT relname FROM pg_class WHERE relname IN ('ran_before', 'ran_from') ORDER BY relname
                """).map { try $0.decode(String.self, "relname") }
            #expect(tables == [offset == 0 ? "ran_from" : "ran_before"])
        }
    }
}
