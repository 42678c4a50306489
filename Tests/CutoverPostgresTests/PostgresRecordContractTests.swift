import Cutover
import CutoverTestSupport
import Testing

/// The record contract suite against the PostgreSQL store, for three entities on tables their
/// plans have expanded: drafts, orders from `examples/orders-status-code` and a composite key,
/// through each plan's own save function; and orders again with statements made at each call
/// (`cutover.save_record_dynamic`), where a save the function was not made for goes.
@Suite("PostgresRecordStore keeps the record contract")
struct PostgresRecordContractTests {
    private static func verify<Entity: RecordContractEntity>(
        _ contract: RecordWritingContract, _ entity: Entity.Type, table: RecordTable, tableName: String,
        statementsPerCall: Bool = false
    ) async throws {
        var made: RecordDatabase<Entity>?
        try await contract.verify {
            let database = try await RecordDatabase<Entity>.make(
                "records_\(table.rawValue)_\(statementsPerCall ? "dynamic_" : "")\(contract.rawValue)", table: table,
                statementsPerCall: statementsPerCall)
            made = database
            return PostgresRecordContractSubject(database: database, table: tableName)
        }
        await made?.close()
    }

    @Test("drafts", .timeLimit(.minutes(3)), arguments: RecordWritingContract.allCases)
    func drafts(_ contract: RecordWritingContract) async throws {
        try await Self.verify(contract, DraftRecords.self, table: .drafts, tableName: "drafts")
    }

    @Test("orders", .timeLimit(.minutes(3)), arguments: RecordWritingContract.allCases)
    func orders(_ contract: RecordWritingContract) async throws {
        try await Self.verify(contract, ContractOrders.self, table: .orders, tableName: "orders")
    }

    @Test("a composite key", .timeLimit(.minutes(3)), arguments: RecordWritingContract.allCases)
    func tenantNotes(_ contract: RecordWritingContract) async throws {
        try await Self.verify(contract, ContractTenantNotes.self, table: .tenantNotes, tableName: "notes")
    }

    @Test("orders, statements made at each call", .timeLimit(.minutes(3)), arguments: RecordWritingContract.allCases)
    func ordersByStatementsMadePerCall(_ contract: RecordWritingContract) async throws {
        try await Self.verify(contract, ContractOrders.self, table: .orders, tableName: "orders", statementsPerCall: true)
    }
}
