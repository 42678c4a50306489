import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Testing

/// The drafts migration in both plan formats the runner reads: the built-in declarative plan
/// (`sql/drafts/plan.json`, format 2, compiled) and the format-1 plan of hand-written SQL
/// files it replaced, kept in `Tests/Fixtures/drafts-format1/`.
enum DraftsPlan: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `sql/drafts/plan.json`: one `alter_column` from `title` to `document`.
    case declarative
    /// The format-1 plan: plan.json naming expand.sql, backfill_batch.sql, contract_….sql.
    case formatOne

    var testDescription: String { self == .declarative ? "declarative plan" : "format-1 plan" }

    /// The folder of the format-1 plan in the source tree.
    static var formatOneFolder: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1").path
    }

    /// The plan with the text of every file it runs.
    func source() throws -> PlanSource {
        switch self {
        case .declarative: try PlanSource.builtIn()
        case .formatOne: try PlanSource.folder(Self.formatOneFolder)
        }
    }

    /// Applies the plan's expand files on `connection`, each in one exchange as the runner
    /// would, without the runner's bookkeeping: for tests that need the expanded table only.
    func expand(on connection: PostgresConnection) throws {
        let source = try source()
        for file in source.plan.step(.expand)?.apply(onServerVersionNumber: connection.serverVersion) ?? [] {
            try connection.execute(unsafeSQL: source.text(file.path))
        }
    }
}
