import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The library example in README.md, compiled and run here so that it cannot rot.
@Suite("README example")
struct ReadmeExampleTests {
    /// The README's code, line for line, except that the database URL is the test's.
    static func example(databaseURL: String) async throws -> Int64? {
        // README example begins
        let configuration = PostgresConfiguration(connectionString: databaseURL)
        let pool = PostgresPool(configuration: configuration, maximumConnections: 8)
        let store = try await PostgresDraftStore(pool: pool)
        let fleet = try await FleetWriterPath.start(configuration: configuration, plan: "drafts")
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store),
                                modern: ModernDraftAdapter(storage: store),
                                following: fleet)
        let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "4.2.0", formats: [.v1, .v2], following: fleet)

        let request = SaveDraft(operationScope: "account-42", operationID: "edit-7", draftID: "draft-1",
                                expectedRevision: 3, content: DraftContent(title: "Quarterly plan"))
        var revision: Int64?
        do {
            revision = try await router.save(request).revision
        } catch SaveFailure.outcomeUnknown {
            // The connection broke around the commit: send the same request again, same operation ID.
        } catch SaveFailure.conflict(_, let current) {
            print("draft-1 is at revision \(current) now; re-read it and try again")
        }
        // README example ends
        try await registration.stop()
        await fleet.stop()
        try await store.outcomes.close()
        await pool.shutdown()
        return revision
    }

    @Test func theExampleSavesThroughTheFleetPath() async throws {
        try await Self.runExample(label: "readme_example", through: nil)
    }

    @Test(.timeLimit(.minutes(3)))
    func theExampleSavesThroughPgBouncerInTransactionMode() async throws {
        let pooler = try await PgBouncerProcess.start(server: try await TestPostgres.shared().adminConnectionString)
        defer { pooler.stop() }
        try await Self.runExample(label: "readme_pooled", through: pooler)
    }

    /// Runs the example on a database whose plan is at the modern writer, directly or through
    /// `pooler`, and checks the save it made.
    private static func runExample(label: String, through pooler: PgBouncerProcess?) async throws {
        let db = try await StoreDatabase.make(label, phase: .modern)
        try await db.sql { try $0.query("INSERT INTO drafts (id, title, revision) VALUES ('draft-1', 'Plan', 3)") }
        let url = try pooler?.connectionString(for: db.database.connectionString) ?? db.database.connectionString
        #expect(try await example(databaseURL: url) == 4)
        let path = try await db.sql { try $0.query("SELECT path FROM cutover.operation_ledger")[0].decode(String.self, "path") }
        #expect(path == "modern")
        await db.close()
    }

    @Test func theReadmeShowsThisCode() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        func normalized(_ lines: some Sequence<Substring>) -> [String] {
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.contains("connectionString:") }
        }
        let code = source.split(separator: "\n").drop { !$0.contains("README example begins") }.dropFirst()
            .prefix { !$0.contains("README example ends") }
        let block = readme.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "```swift" }.dropFirst().prefix { $0 != "```" }
        let imports = ["import Cutover", "import CutoverPostgres", "import PostgresClient"]
        #expect(normalized(block).filter { !imports.contains($0) } == normalized(code))
    }
}
