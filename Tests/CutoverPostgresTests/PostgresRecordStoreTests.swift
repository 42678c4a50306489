import Cutover
import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import PostgresFaults
import Testing

@Suite("PostgresRecordStore")
struct PostgresRecordStoreTests {
    private func order(_ operation: String, id: Int64 = 42, expected: Int64, _ status: OrderStatus) -> SaveRequest<ContractOrders> {
        SaveRequest(operationScope: "shop-1", operationID: operation, key: RecordKey(.bigint(id)), expectedRevision: expected, content: status)
    }

    /// The order's `status` and `status_code` as `paid 2`, NULL for a NULL or a column the table lacks.
    private func row(_ db: RecordDatabase<ContractOrders>, id: Int64 = 42) async throws -> String? {
        try await db.sql { connection in
            try connection.query("""
                SELECT coalesce(to_jsonb(o) ->> 'status', 'NULL') || ' ' || coalesce(to_jsonb(o) ->> 'status_code', 'NULL') AS row
                  FROM orders o WHERE id = \(id)
                """).first?.decode(String.self, "row")
        }
    }

    /// Expects `save` to be refused as a format the table does not store, for a reason that says `hint`.
    private func expectFormatNotStored(_ hint: String, _ save: () async throws -> Any) async {
        do {
            _ = try await save()
            Issue.record("a save of a format the table does not store committed")
        } catch RecordStoreError.formatNotStored(let reason) {
            #expect(reason.contains(hint), "\(reason)")
        } catch {
            Issue.record("expected formatNotStored, caught \(error)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func thirtyTwoConcurrentSavesOfOneOrderOperationOverBothPathsCommitOnce() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_32", table: .orders, poolSize: 32)
        let legacy = RecordAdapter(storage: db.store, path: .legacy)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        _ = try await legacy.save(order("create", expected: 0, .pending))
        let save = order("pay", expected: 1, .paid)
        let results = try await withThrowingTaskGroup(of: RecordSaveResult<ContractOrders>.self) { group in
            for index in 0..<32 {
                group.addTask { try await (index.isMultiple(of: 2) ? legacy : modern).saveReportingOutcome(save) }
            }
            return try await group.reduce(into: [RecordSaveResult<ContractOrders>]()) { $0.append($1) }
        }
        let saved = SavedRecord<ContractOrders>(key: save.key, content: .paid, revision: 2)
        #expect(Set(results.map(\.saved)) == [saved])
        #expect(results.filter { $0.outcome == .committed }.count == 1)
        #expect(results.filter { $0.outcome == .replayed }.count == 31)
        let entries = try await db.sql { connection in
            try connection.query("""
                SELECT count(*) AS n, min(record_key::text) AS record_key, bool_and(draft_id IS NULL) AS no_draft
                  FROM cutover.operation_ledger WHERE plan = 'orders-status-code' AND operation_id = 'pay'
                """)[0]
        }
        #expect(try entries.decode(Int.self, "n") == 1)
        #expect(try entries.decode(String.self, "record_key") == #"{"id": 42}"#)
        #expect(try entries.decode(Bool.self, "no_draft"))
        #expect(try await db.ledgerCount() == 2)
        #expect(try await row(db) == "paid 2")
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aLostReplyToCommitIsOutcomeUnknownAndTheRetryReplays() async throws {
        let database = try await TestPostgres.database("records_lossy")
        let (proxy, proxied) = try database.throughLossyProxy()
        let db = try await RecordDatabase<ContractOrders>.make(on: database, table: .orders, poolSize: 1, connectionString: proxied)
        _ = try await db.store.commit(order("create", expected: 0, .pending), write: ContractOrders.modern.encode(.pending), path: .modern)
        let ship = order("ship", expected: 1, .shipped)
        proxy.loseNextReplyToCommit(ofStatementContaining: "cutover.save_")
        await #expect(throws: SaveFailure.outcomeUnknown) {
            try await db.store.commit(ship, write: ContractOrders.legacy.encode(.shipped), path: .legacy)
        }
        #expect(proxy.lostReplyCount == 1)
        // The retry crosses to the other path, as a router that switched meanwhile would send it.
        let retried = try await db.store.commit(ship, write: ContractOrders.modern.encode(.shipped), path: .modern)
        #expect(retried == .replayed(SavedRecord(key: ship.key, content: .shipped, revision: 2)))
        #expect(try await db.ledgerCount() == 2)
        #expect(try await db.store.record(ship.key)?.revision == 2)
        await db.close()
        proxy.stop()
    }

    @Test(.timeLimit(.minutes(3)))
    func phaseInitRegistersADeclarativePlansEntityAndTheDraftsPlanKeepsItsRevision() async throws {
        let database = try await TestPostgres.database("records_init")
        let registered = try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: try RecordTable.drafts.schemaSQL() + ";" + (try RecordTable.orders.schemaSQL()))
            try PhaseRunner(connection: connection, source: try PlanSource.folder(RecordTable.exampleFolder("orders-status-code"))).initialize()
            try PhaseRunner(connection: connection, source: try PlanSource.builtIn()).initialize()
            return try connection.query("""
                SELECT plan || ' ' || table_name || ' ' || array_to_string(key_columns, ',') || ' ' || coalesce(revision_column, 'xmin') AS entity
                  FROM cutover.record_plans ORDER BY plan
                """).map { try $0.decode(String.self, "entity") }
        }
        #expect(registered == ["drafts public.drafts id revision", "orders-status-code public.orders id xmin"])
    }

    @Test(.timeLimit(.minutes(3)))
    func eachSaveIsOneRoundTrip() async throws {
        let database = try await TestPostgres.database("records_round_trips")
        let (proxy, proxied) = try database.throughLossyProxy()
        let db = try await RecordDatabase<ContractTenantNotes>.make(on: database, table: .tenantNotes, poolSize: 1,
                                                                     connectionString: proxied)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        func note(_ operation: String, expected: Int64) -> SaveRequest<ContractTenantNotes> {
            SaveRequest(operationScope: "t", operationID: operation, key: RecordKey(.bigint(7), .bigint(42)),
                        expectedRevision: expected, content: "note \(expected)")
        }
        // Warm up: connect, and let the server make the statements for this shape.
        _ = try await modern.save(note("create", expected: 0))
        let before = proxy.clientWriteCount
        for revision in Int64(1)...20 {
            _ = try await modern.save(note("edit-\(revision)", expected: revision))
        }
        #expect(proxy.clientWriteCount - before == 20)
        #expect(try await db.store.record(RecordKey(.bigint(7), .bigint(42)))?.revision == 21)
        await db.close()
        proxy.stop()
    }

    @Test(.timeLimit(.minutes(3)))
    func aSaveOfAnOperationInFlightWaitsUpToTheLockTimeoutThenReplaysOnceItCommits() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_in_flight", table: .orders, poolSize: 1)
        let impatient = try await PostgresRecordStore<ContractOrders>(pool: db.pool, lockTimeout: .milliseconds(200),
                                                                      outcomeFlushInterval: nil)
        let save = order("create", expected: 0, .paid)
        // The same operation, sent by another process and not yet committed: its claim holds the ledger's row.
        let other = try db.database.connect()
        try other.execute(unsafeSQL: "BEGIN")
        try other.query(PostgresQuery(unsafeSQL: "SELECT * FROM cutover.save_record($1, 'shop-1', 'create', '{\"id\": 42}', 0, 'modern', '{\"status_code\": 2}', $2)",
                                      binds: [ContractOrders.planName.postgresBind, PostgresBind(bytea: save.canonicalEncoding)]))
        await #expect(throws: RecordStoreError.lockTimeout) {
            try await impatient.commit(save, write: ContractOrders.legacy.encode(.paid), path: .legacy)
        }
        try other.execute(unsafeSQL: "COMMIT")
        let replayed = try await impatient.commit(save, write: ContractOrders.legacy.encode(.paid), path: .legacy)
        #expect(replayed == .replayed(SavedRecord(key: save.key, content: .paid, revision: 1)))
        #expect(try await db.ledgerCount() == 1)
        try await impatient.outcomes.close()
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func eachPathWritesItsOwnColumnsAndTheTriggerDerivesTheOthers() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_paths", table: .orders, poolSize: 2)
        _ = try await db.store.commit(order("create", expected: 0, .paid), write: ContractOrders.modern.encode(.paid), path: .modern)
        #expect(try await row(db) == "paid 2")
        _ = try await db.store.commit(order("ship", expected: 1, .shipped), write: ContractOrders.legacy.encode(.shipped), path: .legacy)
        #expect(try await row(db) == "shipped 3")
        // Only the legacy path's write is a legacy one, which contract's checks watch for.
        let legacyWrites = try await db.sql { connection in
            try connection.query("SELECT count(*) AS n FROM cutover.legacy_activity WHERE table_name = 'public.orders'")[0].decode(Int.self, "n")
        }
        #expect(legacyWrites == 1)
        let read = try await db.store.read(RecordKey(.bigint(42)), as: .modern)
        #expect(read?.content == .shipped && read?.revision == 2)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aPathWhoseFormatIsNotStoredIsRefusedAndCommitsNothing() async throws {
        let before = try await RecordDatabase<ContractOrders>.make("records_before_expand", table: .orders, layout: .baseline, poolSize: 1)
        // Before expand the plan's revision column does not exist yet either: the plan adds it.
        await #expect(throws: RecordStoreError.entityNotUsable("table public.orders of plan orders-status-code has no column revision")) {
            try await before.store.commit(order("create", expected: 0, .paid), write: ContractOrders.modern.encode(.paid), path: .modern)
        }
        #expect(try await before.ledgerCount() == 0)
        await before.close()

        let notes = try await RecordDatabase<ContractTenantNotes>.make("records_before_expand_notes", table: .tenantNotes,
                                                                       layout: .baseline, poolSize: 1)
        let note = SaveRequest<ContractTenantNotes>(operationScope: "t", operationID: "n", key: RecordKey(.bigint(1), .bigint(1)),
                                                    expectedRevision: 0, content: "a note")
        await expectFormatNotStored("no column body_text: the modern format is not stored yet (run expand first)") {
            try await notes.store.commit(note, write: ContractTenantNotes.modern.encode(note.content), path: .modern)
        }
        #expect(try await notes.store.commit(note, write: ContractTenantNotes.legacy.encode(note.content), path: .legacy).saved.revision == 1)
        await notes.close()

        let after = try await RecordDatabase<ContractTenantNotes>.make("records_after_contract", table: .tenantNotes,
                                                                       layout: .contracted, poolSize: 1)
        await expectFormatNotStored("no column body: the legacy format is no longer stored (contract removed it)") {
            try await after.store.commit(note, write: ContractTenantNotes.legacy.encode(note.content), path: .legacy)
        }
        #expect(try await after.ledgerCount() == 0)
        #expect(try await after.store.commit(note, write: ContractTenantNotes.modern.encode(note.content), path: .modern).saved.revision == 1)
        await after.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func statementsMadeBeforeContractAreNotRunOnTheContractedTable() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_across_contract", table: .orders, poolSize: 1)
        let legacy = RecordAdapter(storage: db.store, path: .legacy)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        _ = try await legacy.save(order("create", expected: 0, .pending))
        _ = try await legacy.save(order("pay", expected: 1, .paid))
        let compiled = try RecordTable.orders.compiled()
        try await db.sql { connection in
            let steps = CompiledSteps(compiled: compiled, connection: connection)
            try steps.backfill(batchSize: 100)
            try steps.run(.contract)
        }
        await expectFormatNotStored("no column status: the legacy format is no longer stored") {
            try await legacy.save(order("ship", expected: 2, .shipped))
        }
        #expect(try await modern.save(order("ship", expected: 2, .shipped)).revision == 3)
        #expect(try await row(db) == "NULL 3")
        #expect(try await db.ledgerCount() == 3)
        await db.close()
    }

    /// A save of exactly one path's columns goes to that path's own function
    /// (`cutover.save_modern_<plan>`), with its values as text: it commits and replays with
    /// `cutover.save_record` and the plan's JSON function gone.
    @Test(.timeLimit(.minutes(3)))
    func aSaveOfOnePathsColumnsCallsThatPathsOwnFunction() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_path_function", table: .orders, poolSize: 1)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                DROP FUNCTION cutover.save_record_orders_status_code(text, text, jsonb, bigint, text, jsonb, bytea, integer);
                DROP FUNCTION cutover.save_record(text, text, text, jsonb, bigint, text, jsonb, bytea, integer);
                """)
        }
        #expect(try await modern.save(order("create", expected: 0, .pending)).revision == 1)
        #expect(try await modern.save(order("create", expected: 0, .pending)).revision == 1)
        #expect(try await modern.save(order("pay", expected: 1, .paid)).revision == 2)
        #expect(try await row(db) == "paid 2")
        #expect(try await db.ledgerCount() == 2)
        await db.close()
    }

    /// The store calls the path's own save function and the plan's, read when it was made;
    /// when they are gone, the call never ran, and the same save goes through `cutover.save_record`.
    @Test(.timeLimit(.minutes(3)))
    func aSaveWhoseOwnFunctionIsGoneGoesThroughSaveRecordAndCommitsOnce() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_own_function_gone", table: .orders, poolSize: 1)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        #expect(try await modern.save(order("create", expected: 0, .pending)).revision == 1)
        try await db.sql { connection in
            let modernFunction = try connection.query("""
                SELECT modern_save_function FROM cutover.record_plans WHERE plan = 'orders-status-code'
                """)[0].decode(String.self, "modern_save_function")
            try connection.execute(unsafeSQL: """
                DROP FUNCTION \(modernFunction)(text, text, text, bigint, text, bytea, integer);
                DROP FUNCTION cutover.save_record_orders_status_code(text, text, jsonb, bigint, text, jsonb, bytea, integer);
                UPDATE cutover.record_plans SET save_function = NULL, modern_save_function = NULL WHERE plan = 'orders-status-code';
                """)
        }
        #expect(try await modern.save(order("pay", expected: 1, .paid)).revision == 2)
        #expect(try await modern.save(order("pay", expected: 1, .paid)).revision == 2)
        #expect(try await row(db) == "paid 2")
        #expect(try await db.ledgerCount() == 2)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func withoutARevisionColumnTheRevisionIsXminWhichAPlainSQLWriteChangesToo() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_xmin", table: .ordersWithoutRevision, poolSize: 2)
        let modern = RecordAdapter(storage: db.store, path: .modern)
        let created = try await modern.save(order("create", expected: 0, .pending))
        let xmin = { (db: RecordDatabase<ContractOrders>) in
            try await db.sql { try $0.query("SELECT xmin::text::bigint AS x FROM orders WHERE id = 42")[0].decode(Int64.self, "x") }
        }
        #expect(created.revision == (try await xmin(db)))
        #expect(try await modern.save(order("create", expected: 0, .pending)) == created)

        // An old writer knows nothing of Cutover; its plain UPDATE still moves the revision.
        try await db.sql { try $0.execute(unsafeSQL: "UPDATE orders SET status = 'shipped' WHERE id = 42") }
        let afterOldWriter = try await xmin(db)
        #expect(afterOldWriter != created.revision)
        let stale = await #expect(throws: SaveFailure.self) { try await modern.save(order("pay", expected: created.revision, .paid)) }
        #expect(stale == .conflict(expected: created.revision, current: afterOldWriter))
        let paid = try await modern.save(order("pay", expected: afterOldWriter, .paid))
        #expect(paid.revision == (try await xmin(db)))
        #expect(try await row(db) == "paid 2")
        #expect(try await db.ledgerCount() == 2)
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func aUUIDKeyedTableWithoutRevisionSavesOnBothPaths() async throws {
        let db = try await RecordDatabase<RecordTokens>.make("records_uuid", table: .tokens, poolSize: 1)
        let key = RecordKey(.uuid(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef))
        func save(_ operation: String, expected: Int64, _ label: String) -> SaveRequest<RecordTokens> {
            SaveRequest(operationScope: "s", operationID: operation, key: key, expectedRevision: expected, content: label)
        }
        let created = try await RecordAdapter(storage: db.store, path: .legacy).save(save("create", expected: 0, "quiet"))
        let renamed = try await RecordAdapter(storage: db.store, path: .modern).save(save("rename", expected: created.revision, "loud"))
        #expect(renamed.revision != created.revision)
        let stored = try #require(try await db.store.record(key))
        #expect(stored.revision == renamed.revision)
        #expect(stored.columns == ["label": .text("loud"), "shout": .text("LOUD")])
        let id = try await db.sql { try $0.query("SELECT id::text AS id FROM tokens")[0].decode(String.self, "id") }
        #expect(id == "01234567-89ab-cdef-0123-456789abcdef")
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)))
    func outcomesAreCountedUnderTheEntitysPlan() async throws {
        let db = try await RecordDatabase<ContractOrders>.make("records_outcomes", table: .orders, poolSize: 1)
        let legacy = RecordAdapter(storage: db.store, path: .legacy)
        _ = try await legacy.save(order("create", expected: 0, .pending))
        _ = try await legacy.save(order("create", expected: 0, .pending))
        await #expect(throws: SaveFailure.self) { try await legacy.save(order("late", expected: 0, .paid)) }
        try await db.store.outcomes.flush()
        let counts = try await db.sql { connection in
            try connection.query("""
                SELECT plan || ' ' || path || ' ' || outcome || ' ' || sum(count) AS line FROM cutover.outcome_log
                 GROUP BY plan, path, outcome ORDER BY outcome
                """).map { try $0.decode(String.self, "line") }
        }
        #expect(counts == ["orders-status-code legacy committed 1", "orders-status-code legacy conflict 1",
                           "orders-status-code legacy replayed 1"])
        await db.close()
    }
}
