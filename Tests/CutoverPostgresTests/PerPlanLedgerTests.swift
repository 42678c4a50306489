import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The operation ledger is keyed by plan (control schema version 6): the same scope and operation
/// ID in two plans are two operations, and the upgrade from version 5 keeps every entry as a
/// drafts one.
@Suite("Per-plan operation ledger")
struct PerPlanLedgerTests {
    /// The ledger's entries as `plan/scope/operation_id`, sorted.
    private static func entries(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT plan || '/' || scope || '/' || operation_id AS entry FROM cutover.operation_ledger ORDER BY 1")
            .map { try $0.decode(String.self, "entry") }
    }

    /// Calls `cutover.save_draft` as version 5 and version 6 both define it; returns its outcome.
    private static func saveDraft(_ connection: PostgresConnection, operation: String, request: String,
                                  draft: String, expected: Int64, title: String) throws -> String {
        try connection.query("""
            SELECT outcome FROM cutover.save_draft('account-1', \(operation), convert_to(\(request), 'UTF8'), \(draft),
                                                   \(expected), 'legacy', \(title), NULL, NULL)
            """)[0].decode(String.self, "outcome")
    }

    @Test(.timeLimit(.minutes(3)))
    func aVersion5LedgerMovesToTheDraftsPlanWithEveryEntryAndTheApplicationStillOnlyCallsFunctions() async throws {
        try await Roles.withRoles("ledger_from_5") { roles in
            try await roles.installAsMigrator(version: 5, schema: ControlSchemaVersion5.schema,
                                              grants: ControlSchemaVersion5.grants) { migrator in
                try migrator.execute(unsafeSQL: "INSERT INTO cutover.migration_state (plan) VALUES ('drafts')")
            }
            let before = try await roles.asApplication { app in
                [try Self.saveDraft(app, operation: "create", request: "create draft-9", draft: "draft-9", expected: 0, title: "Plan"),
                 try Self.saveDraft(app, operation: "edit", request: "edit draft-9", draft: "draft-9", expected: 1, title: "Plan, revised")]
            }
            #expect(before == ["committed", "committed"])
            #expect(try await roles.upgradeAsMigrator() == .installed(from: 5))

            let (moved, revisions) = try await roles.admin { connection in
                (try Self.entries(connection),
                 try connection.query("SELECT revision FROM cutover.operation_ledger ORDER BY revision").map { try $0.decode(Int64.self, "revision") })
            }
            #expect(moved == ["drafts/account-1/create", "drafts/account-1/edit"])
            #expect(revisions == [1, 2])
            // The entries made under version 5 are the drafts plan's operations now: a retry replays,
            // the same ID with another request is refused.
            let after = try await roles.asApplication { app in
                [try Self.saveDraft(app, operation: "edit", request: "edit draft-9", draft: "draft-9", expected: 1, title: "Plan, revised"),
                 try Self.saveDraft(app, operation: "edit", request: "another edit", draft: "draft-9", expected: 2, title: "Other")]
            }
            #expect(after == ["replayed", "operationConflict"])
            let refused = try await roles.asApplication { app in
                [RolesTests.failure { try app.execute(unsafeSQL: "SELECT * FROM cutover.operation_ledger") }?.sqlState,
                 RolesTests.failure {
                     try app.execute(unsafeSQL: """
                         INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path)
                         VALUES ('orders', 'account-1', 'edit', '\\x00', 'draft-9', 1, 'legacy')
                         """)
                 }?.sqlState]
            }
            #expect(refused == [.insufficientPrivilege, .insufficientPrivilege])
            // The upgraded key is the plan's: another plan may hold the same scope and operation ID.
            let keyed = try await roles.admin { connection in
                try connection.execute(unsafeSQL: """
                    INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path)
                    VALUES ('orders', 'account-1', 'edit', sha256('an order'::bytea), 'order-7', 1, 'legacy')
                    """)
                return try Self.entries(connection)
            }
            #expect(keyed == moved + ["orders/account-1/edit"])
            // Installing again changes nothing.
            #expect(try await roles.reinstallAsMigrator() == .current)
            let reinstalled = try await roles.admin { try Self.entries($0) }
            #expect(reinstalled == keyed)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func theSameOperationInTwoPlansIsTwoEntriesAndEachPlanPrunesAlone() async throws {
        let db = try await StoreDatabase.make("ledger_two_plans", poolSize: 2)
        let modern = ModernDraftAdapter(storage: db.store)
        let create = SaveDraft(operationScope: "account-1", operationID: "op-1", draftID: "draft-1", expectedRevision: 0,
                               content: DraftContent(title: "Plan"))
        #expect(try await modern.save(create).revision == 1)
        // The orders plan has no store yet: its entry is written as its owner writes the ledger, for
        // the same scope and operation ID, with another fingerprint.
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path, committed_at)
                VALUES ('orders', 'account-1', 'op-1', sha256('an order'::bytea), 'order-7', 4, 'modern', now() - interval '8 days')
                """)
        }
        #expect(try await db.sql { try Self.entries($0) } == ["drafts/account-1/op-1", "orders/account-1/op-1"])
        // The drafts operation is still its own: a retry replays rather than meeting the orders entry.
        #expect(try await modern.save(create).revision == 1)
        #expect(try await db.ledgerCount() == 2)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: "UPDATE cutover.operation_ledger SET committed_at = now() - interval '9 days' WHERE plan = 'drafts'")
        }
        let drafts = try await LedgerPruner(pool: db.pool).prune(plan: "drafts")
        #expect(drafts == LedgerPruner.Report(deleted: 1, batches: 1, isComplete: true))
        #expect(try await db.sql { try Self.entries($0) } == ["orders/account-1/op-1"])
        let every = try await LedgerPruner(pool: db.pool).prune()
        #expect(every.deleted == 1)
        #expect(try await db.sql { try Self.entries($0) } == [])
        await db.close()
    }
}
