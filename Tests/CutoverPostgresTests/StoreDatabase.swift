import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient

/// A fresh database with the control schema and the legacy `drafts` table, optionally
/// expanded, and a store over it.
struct StoreDatabase: Sendable {
    enum Layout: Sendable {
        /// The legacy table only, as before Cutover.
        case baseline
        /// After the drafts plan's expand: v1 and v2 side by side.
        case expanded
    }

    let database: TestDatabase
    let pool: PostgresPool
    let store: PostgresDraftStore

    /// - Parameters:
    ///   - plan: whose expand makes the expanded layout: the built-in plan's unless told.
    ///   - pooler: when given, the store's pool connects through it (the setup does not).
    ///   - acquireTimeout: the pool's; the default outlasts any wait a loaded machine makes.
    static func make(_ label: String, layout: Layout = .expanded, plan: DraftsPlan = .declarative, poolSize: Int = 8,
                     through pooler: PgBouncerProcess? = nil, acquireTimeout: Duration = .seconds(45)) async throws -> StoreDatabase {
        try await make(label, poolSize: poolSize, pooler: pooler, acquireTimeout: acquireTimeout) { connection in
            try ControlSchema.install(on: connection)
            if layout == .expanded { try plan.expand(on: connection) }
        }
    }

    /// A database whose drafts plan (the built-in one unless told) the phase runner has taken to `phase`.
    static func make(_ label: String, phase: MigrationPhase, plan: DraftsPlan = .declarative, poolSize: Int = 8,
                     through pooler: PgBouncerProcess? = nil) async throws -> StoreDatabase {
        try await make(label, poolSize: poolSize, pooler: pooler) { connection in
            let runner = PhaseRunner(connection: connection, source: try plan.source(),
                                     options: .init(forceReaders: true, modernWriterWindow: .zero))
            try runner.initialize()
            let path: [PhaseStep] = [.expand, .switchModern, .backfill, .contract]
            for step in path.prefix(MigrationPhase.allCases.firstIndex(of: phase)!) { try runner.run(step) }
        }
    }

    private static func make(_ label: String, poolSize: Int, pooler: PgBouncerProcess? = nil,
                             acquireTimeout: Duration = .seconds(45),
                             prepare: @escaping @Sendable (PostgresConnection) throws -> Void) async throws -> StoreDatabase {
        let database = try await TestPostgres.database(label)
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try prepare(connection)
        }
        let configuration = PostgresConfiguration(connectionString: try pooler?.connectionString(for: database.connectionString)
                                                      ?? database.connectionString,
                                                  applicationName: "cutover-store-test", connectTimeout: TestPostgres.connectTimeout)
        // The contract suite sends 100 saves at once over the pool's few connections: the last
        // waits for a connection, then for the row, behind all the others, and on a loaded
        // machine that takes longer than the pool's and the store's default 10 s and 5 s. The
        // contract is that exactly one commits, not how fast; a save that timed out waiting is
        // a definite "nothing committed" the suite sends again (see `committedNothing`), and
        // a pool whose timeout most saves meet is tested too.
        let pool = PostgresPool(configuration: configuration, maximumConnections: poolSize, acquireTimeout: acquireTimeout)
        let store = try await PostgresDraftStore(pool: pool, lockTimeout: .seconds(45), outcomeFlushInterval: nil)
        return StoreDatabase(database: database, pool: pool, store: store)
    }

    /// Runs blocking SQL on a connection of the pool (for the test's observations and setup).
    @discardableResult
    func sql<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    func ledgerCount() async throws -> Int {
        try await sql { try $0.query("SELECT count(*) AS n FROM cutover.operation_ledger")[0].decode(Int.self, "n") }
    }

    func close() async {
        try? await store.outcomes.close()
        await pool.shutdown()
    }
}

/// The PostgreSQL store as a subject of the contract suite.
struct PostgresContractSubject: DraftWritingContractSubject {
    let database: StoreDatabase

    var storage: any DraftStorage { database.store }

    func commitCount() async throws -> Int { try await database.ledgerCount() }

    func seed(_ draft: StoredDraft) async throws {
        let content = try DraftCodecRegistry.standard.decode(draft.encoded, draftID: draft.draftID)
        let document: String? = draft.encoded.format == .v2 ? String(decoding: draft.encoded.bytes, as: UTF8.self) : nil
        try await database.sql { connection in
            if let document {
                try connection.query("""
                    INSERT INTO drafts (id, title, revision, document)
                    VALUES (\(draft.draftID), \(content.title), \(draft.revision), \(document)::jsonb)
                    """)
            } else {
                // As a legacy writer before expand would have left it: v1 only. Whichever plan
                // expanded the table, its sync trigger is the table's only one.
                try connection.execute(unsafeSQL: "ALTER TABLE drafts DISABLE TRIGGER USER")
                try connection.query("INSERT INTO drafts (id, title, revision) VALUES (\(draft.draftID), \(content.title), \(draft.revision))")
                try connection.execute(unsafeSQL: "ALTER TABLE drafts ENABLE TRIGGER USER")
            }
        }
    }

    func storedDraft(id draftID: String) async throws -> StoredDraft? {
        try await database.store.draft(id: draftID)
    }

    /// A save that waited out the store's lock timeout or the pool's acquire timeout rolled
    /// back or never began: nothing committed, and the same operation ID may be sent again.
    func committedNothing(_ error: any Error) -> Bool {
        error as? DraftStoreError == .lockTimeout || (error as? PostgresError)?.code == .poolTimeout
    }
}
