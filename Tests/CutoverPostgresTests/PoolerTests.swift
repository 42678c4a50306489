import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The store, the outcome log and the reader registry through a real PgBouncer in transaction
/// mode (Debian's 1.18), with fewer server connections than clients.
@Suite("The store through PgBouncer in transaction mode")
struct PoolerTests {
    @Test(.timeLimit(.minutes(3)), arguments: DraftWritingContract.allCases)
    func keepsTheContract(_ contract: DraftWritingContract) async throws {
        let pooler = try await PgBouncerProcess.start(server: try await TestPostgres.shared().adminConnectionString)
        defer { pooler.stop() }
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("pooled_\(contract.rawValue)", through: pooler)
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func manyClientsSavingThroughThreeServerConnectionsNeverFailAndNeverMixStatements() async throws {
        let pooler = try await PgBouncerProcess.start(server: try await TestPostgres.shared().adminConnectionString,
                                                      options: .init(poolSize: 3))
        defer { pooler.stop() }
        let clients = 24, saves = 12
        let db = try await StoreDatabase.make("pooled_load", poolSize: clients, through: pooler)
        let legacy = LegacyDraftAdapter(storage: db.store)
        let modern = ModernDraftAdapter(storage: db.store)
        // Any statement answered for another client, or any save lost between server
        // connections, shows in a result.
        let problems = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<clients {
                group.addTask { await Self.save(asClient: client, saves: saves, legacy: legacy, modern: modern) }
            }
            var all: [String] = []
            for try await problems in group { all += problems }
            return all
        }
        #expect(problems == [])
        #expect(try await db.ledgerCount() == clients * saves)
        let revisions = try await db.sql { connection in
            try connection.query("SELECT id, revision, title FROM drafts ORDER BY id").map {
                "\(try $0.decode(String.self, "id")) \(try $0.decode(Int64.self, "revision")) \(try $0.decode(String.self, "title"))"
            }
        }
        #expect(Set(revisions) == Set((0..<clients).map { "draft-\($0) \(saves) Client \($0), save \(saves - 1)" }))
        // The test's own sessions of a moment ago may still be leaving pg_stat_activity (a
        // backend exits after its client has gone): what stays is PgBouncer's.
        var servers = Int.max
        let fewEnough = try await eventually(within: .seconds(30)) {
            servers = try await onThread {
                try db.database.connect().query("""
                    SELECT count(*) AS n FROM pg_stat_activity
                     WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                    """)[0].decode(Int.self, "n")
            }
            return servers <= 3
        }
        #expect(fewEnough, "\(servers) server connections")
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func theStoreTheOutcomeLogAndTheRegistryLeaveNoStateOnTheServerConnection() async throws {
        let pooler = try await PgBouncerProcess.start(server: try await TestPostgres.shared().adminConnectionString,
                                                      options: .init(poolSize: 1))
        defer { pooler.stop() }
        let db = try await StoreDatabase.make("pooled_leftovers", phase: .modern, through: pooler)
        let url = try pooler.connectionString(for: db.database.connectionString)
        let pool = PostgresPool(configuration: .init(connectionString: url, applicationName: "web"), maximumConnections: 4)
        let store = try await PostgresDraftStore(pool: pool)
        let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                        applicationVersion: "4.2.0", formats: [.v1, .v2])
        let router = SaveRouter(legacy: LegacyDraftAdapter(storage: store), modern: ModernDraftAdapter(storage: store),
                                path: .modern)
        let saved = try await router.save(SaveDraft(operationScope: "account-1", operationID: "create", draftID: "draft-1",
                                                    expectedRevision: 0, content: DraftContent(title: "Plan")))
        #expect(saved.revision == 1)
        #expect(try await store.read(id: "draft-1")?.revision == 1)
        try await store.outcomes.flush()
        try await registration.stop()
        try await store.outcomes.close()
        await pool.shutdown()
        let leftovers = try await onThread { try SessionLeftovers.probe(through: url) }
        #expect(leftovers == .none)
        let logged = try await db.sql { connection in
            try connection.query("SELECT coalesce(sum(count), 0)::int AS n FROM cutover.outcome_log WHERE outcome = 'committed'")[0]
                .decode(Int.self, "n")
        }
        #expect(logged == 1)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aServerConnectionTerminatedUnderASaveCommitsNothingAndTheRetryCommitsOnce() async throws {
        let pooler = try await PgBouncerProcess.start(server: try await TestPostgres.shared().adminConnectionString,
                                                      options: .init(poolSize: 2))
        defer { pooler.stop() }
        let db = try await StoreDatabase.make("pooled_terminated", poolSize: 2, through: pooler)
        let writer = ModernDraftAdapter(storage: db.store)
        _ = try await writer.save(SaveDraft(operationScope: "account-1", operationID: "create", draftID: "draft-1",
                                            expectedRevision: 0, content: DraftContent(title: "Plan")))
        // Hold the draft's row, directly, so that the save blocks inside its transaction.
        let blocker = try db.database.connect(applicationName: "row-holder")
        try blocker.execute(unsafeSQL: "BEGIN")
        try blocker.query("SELECT 1 FROM drafts WHERE id = \("draft-1") FOR UPDATE")
        let edit = SaveDraft(operationScope: "account-1", operationID: "edit", draftID: "draft-1", expectedRevision: 1,
                             content: DraftContent(title: "Plan, revised"))
        let save = Task { try await writer.save(edit) }
        // The server connection PgBouncer gave the save, found waiting on the row lock.
        let database = db.database
        let deadline = ContinuousClock.now + .seconds(90)
        var terminated = false
        while !terminated, ContinuousClock.now < deadline {
            terminated = try await onThread {
                try database.connect().query("""
                    SELECT count(pg_terminate_backend(pid, 5000)) AS n FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()
                    """)[0].decode(Int.self, "n") == 1
            }
            if !terminated { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(terminated)
        let outcome = await save.result
        try blocker.execute(unsafeSQL: "ROLLBACK")
        #expect(outcome.failure != nil)
        #expect(try await db.ledgerCount() == 1)
        // The same request again, through the pooler, as a client sends it until answered (an
        // attempt that meets a connection the failure broke ends unknown): it commits, once.
        var retried: SavedDraft?
        for _ in 0..<5 where retried == nil {
            do { retried = try await writer.save(edit) } catch SaveFailure.outcomeUnknown { continue }
        }
        #expect(retried == SavedDraft(draftID: "draft-1", content: edit.content, revision: 2))
        #expect(try await db.ledgerCount() == 2)
        #expect(try await db.store.draft(id: "draft-1")?.revision == 2)
        await db.close()
    }

    /// One client's saves: its own draft, writers alternating, each save sent twice (the
    /// second must replay the first). Returns what went wrong.
    private static func save(asClient client: Int, saves: Int, legacy: LegacyDraftAdapter,
                             modern: ModernDraftAdapter) async -> [String] {
        var problems: [String] = []
        let draftID = "draft-\(client)"
        for revision in 0..<Int64(saves) {
            let request = SaveDraft(operationScope: "account-\(client)", operationID: "edit-\(revision)",
                                    draftID: draftID, expectedRevision: revision,
                                    content: DraftContent(title: "Client \(client), save \(revision)",
                                                          body: String(repeating: "x", count: client)))
            let (writer, retrier): (any ReportingDraftWriting, any ReportingDraftWriting) =
                revision.isMultiple(of: 2) ? (legacy, modern) : (modern, legacy)
            let expected = SavedDraft(draftID: draftID, content: request.content, revision: revision + 1)
            do {
                let first = try await writer.saveReportingOutcome(request)
                let again = try await retrier.saveReportingOutcome(request)
                if first != .committed(expected) { problems.append("\(draftID) save \(revision) returned \(first)") }
                if again != .replayed(expected) { problems.append("\(draftID) retry \(revision) returned \(again)") }
            } catch {
                problems.append("\(draftID) save \(revision) failed: \(error)")
            }
        }
        return problems
    }
}
