import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient

/// Databases and plan folders for the runner's tests.
enum PlanFixtures {
    /// A database with seeded legacy drafts and the control schema, its plan at baseline.
    static func baseline(_ label: String, rows: Int = 30) async throws -> TestDatabase {
        let database = try await TestPostgres.database(label)
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try connection.query("""
                INSERT INTO drafts (id, title, revision) SELECT 'seed-' || lpad(n::text, 4, '0'), 'Seed ' || n, 1
                  FROM generate_series(1, \(rows)) AS n
                """)
            try PhaseRunner(connection: connection, source: try PlanSource.builtIn()).initialize()
        }
        return database
    }

    /// The format-1 drafts plan (``DraftsPlan/formatOne``) copied to a new folder, with `edit`
    /// applied to its files: for tests of how the runner treats a plan's own SQL files.
    static func folder(_ edit: (inout [String: String]) -> Void) throws -> String {
        var files = try DraftsPlan.formatOne.source().files
        files["plan.json"] = try String(contentsOfFile: DraftsPlan.formatOneFolder + "/plan.json", encoding: .utf8)
        edit(&files)
        let folder = TestScratch.url("cutover-plan")
        for (path, text) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return folder.path
    }
}
