import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import PostgresClient

/// A fresh database holding one entity's table, taken by its plan to a layout, and a record store over it.
struct RecordDatabase<Entity: RecordEntity>: Sendable {
    let database: TestDatabase
    let pool: PostgresPool
    let store: PostgresRecordStore<Entity>

    static func make(_ label: String, table: RecordTable, layout: RecordTable.Layout = .expanded,
                     poolSize: Int = 8, statementsPerCall: Bool = false) async throws -> RecordDatabase {
        try await make(on: try await TestPostgres.database(label), table: table, layout: layout, poolSize: poolSize,
                       statementsPerCall: statementsPerCall)
    }

    /// - Parameters:
    ///   - connectionString: where the store's pool connects (a proxy) instead of the database.
    ///   - statementsPerCall: whether the plan's registration names no writer's columns, so
    ///     that every save goes to `cutover.save_record_dynamic`.
    static func make(on database: TestDatabase, table: RecordTable, layout: RecordTable.Layout = .expanded, poolSize: Int = 8,
                     connectionString: String? = nil, statementsPerCall: Bool = false) async throws -> RecordDatabase {
        try await onThread {
            let connection = try database.connect()
            try table.prepare(on: connection, layout: layout)
            if statementsPerCall {
                try connection.query("UPDATE cutover.record_plans SET legacy_columns = NULL, modern_columns = NULL WHERE plan = \(Entity.planName)")
                try RecordPlanRegistry.remakeSave(plan: Entity.planName, on: connection)
            }
        }
        let configuration = PostgresConfiguration(connectionString: connectionString ?? database.connectionString,
                                                  applicationName: "cutover-record-test", connectTimeout: TestPostgres.connectTimeout)
        // As StoreDatabase: a loaded machine may keep the last of many racing saves waiting
        // longer than the defaults; the contract is one commit, not how fast.
        let pool = PostgresPool(configuration: configuration, maximumConnections: poolSize, acquireTimeout: .seconds(45))
        let store = try await PostgresRecordStore<Entity>(pool: pool, lockTimeout: .seconds(45), outcomeFlushInterval: nil)
        return RecordDatabase(database: database, pool: pool, store: store)
    }

    /// Runs blocking SQL on a connection of the pool (for the test's observations and setup).
    @discardableResult
    func sql<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    /// The ledger's entries of the entity's plan.
    func ledgerCount() async throws -> Int {
        try await sql { try $0.query("SELECT count(*) AS n FROM cutover.operation_ledger WHERE plan = \(Entity.planName)")[0].decode(Int.self, "n") }
    }

    func close() async {
        do { try await store.outcomes.close() } catch { /* the pool is going away either way */ }
        await pool.shutdown()
    }
}

/// The PostgreSQL record store as a subject of the record contract suite.
struct PostgresRecordContractSubject<Entity: RecordContractEntity>: RecordWritingContractSubject {
    let database: RecordDatabase<Entity>
    /// The table's name, for seeding.
    let table: String

    var storage: PostgresRecordStore<Entity> { database.store }

    /// The expanded table's sync trigger sets the other format's columns.
    var synchronizesFormats: Bool { true }

    func commitCount() async throws -> Int { try await database.ledgerCount() }

    /// Inserts the row as a plain-SQL writer would, naming its key, columns and revision;
    /// the sync trigger derives the columns of the other format.
    func seed(_ record: StoredRecord) async throws {
        var values = record.columns
        for (column, part) in zip(Entity.keyColumns, record.key.parts) {
            switch part {
            case .bigint(let value): values[column.name] = .integer(value)
            case .uuid, .text: values[column.name] = .text(part.description)
            }
        }
        values["revision"] = .integer(record.revision)
        let json = PostgresBind(utf8Text: RecordJSON.columns(values), type: .jsonb)
        try await database.sql { connection in
            try connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(table) SELECT * FROM jsonb_populate_record(NULL::\(table), $1::jsonb)
                """, binds: [json]))
        }
    }

    func storedRecord(_ key: RecordKey) async throws -> StoredRecord? {
        try await database.store.record(key)
    }
}
