import Cutover
import CutoverTestSupport
import Testing

@Suite("Record readers")
struct RecordReaderTests {
    private let modern = RecordReader<ContractOrders>(as: .modern)
    private let legacy = RecordReader<ContractOrders>(as: .legacy)

    @Test("a modern reader reads the modern columns, and the legacy ones of a row not converted yet")
    func modernReaderToleratesLegacyRows() throws {
        #expect(try modern.read(["status": .text("pending"), "status_code": .integer(OrderStatus.paid.code)]) == .paid)
        #expect(try modern.read(["status": .text("shipped"), "status_code": .null]) == .shipped)
        #expect(try modern.read(["status_code": .integer(OrderStatus.shipped.code)]) == .shipped)
        let draft = try RecordReader<DraftRecords>(as: .modern).read(["title": .text("Old"), "document": .null])
        #expect(draft == DraftContent(title: "Old"))
    }

    @Test("a legacy reader reads the legacy columns only, and says so once contract removed them")
    func legacyReaderReadsLegacyOnly() throws {
        #expect(try legacy.read(["status": .text("paid"), "status_code": .integer(OrderStatus.paid.code)]) == .paid)
        #expect(throws: RecordReadError.formatNotStored(.legacy)) {
            try legacy.read(["status_code": .integer(OrderStatus.paid.code)])
        }
        #expect(throws: RecordReadError.formatNotStored(.modern)) { try modern.read([:]) }
    }

    @Test("a row no format can read names each format tried and its column, never the value")
    func unreadableRowNamesEveryAttempt() throws {
        let row: [String: RecordColumnValue] = ["status": .text("lost-in-transit"), "status_code": .integer(99)]
        let failure = #expect(throws: RecordReadError.self) { try modern.read(row) }
        #expect(failure == .unreadable([
            .init(format: .modern, problem: .unexpectedValue(column: "status_code")),
            .init(format: .legacy, problem: .unexpectedValue(column: "status")),
        ]))
        let line = try #require(failure).description
        #expect(line == "no format could read the record: modern: column status_code holds a value this format does not define; "
            + "legacy: column status holds a value this format does not define")
        #expect(!line.contains("lost-in-transit") && !line.contains("99"))
    }

    @Test("what a store wrote through either path reads back alike through the modern reader")
    func bothPathsReadBack() async throws {
        let store = InMemoryRecordStore<ContractOrders>()
        for (index, path) in SavePath.allCases.enumerated() {
            let key = RecordKey(.bigint(Int64(index) + 1))
            let request = SaveRequest<ContractOrders>(operationScope: "s", operationID: "op-\(index)", key: key,
                                                      expectedRevision: 0, content: .shipped)
            _ = try await RecordAdapter(storage: store, path: path).save(request)
            let stored = try #require(await store.record(key))
            #expect(try modern.read(stored.columns) == .shipped, "\(path)")
        }
    }
}
