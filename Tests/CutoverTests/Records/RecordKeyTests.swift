import Cutover
import CutoverTestSupport
import Testing

@Suite("Record keys")
struct RecordKeyTests {
    @Test("text parts compare and hash by their exact UTF-8 bytes, not by Unicode equivalence")
    func textComparesByBytes() {
        let composed = RecordKey(.text("\u{E9}"))
        let decomposed = RecordKey(.text("e\u{301}"))
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(decomposed < composed)
    }

    @Test("keys order part by part, bigints numerically")
    func ordering() {
        let keys = [RecordKey(.bigint(2), .bigint(1)), RecordKey(.bigint(1), .bigint(10)), RecordKey(.bigint(1), .bigint(-3))]
        #expect(keys.sorted() == [RecordKey(.bigint(1), .bigint(-3)), RecordKey(.bigint(1), .bigint(10)), RecordKey(.bigint(2), .bigint(1))])
    }

    @Test("a uuid shows in its 8-4-4-4-12 form, leading zeros kept")
    func uuidDescription() {
        #expect(RecordKeyPart.uuid(0x0123_4567_89ab_cdef_0011_2233_4455_6677).description == "01234567-89ab-cdef-0011-223344556677")
        #expect(RecordKey(.bigint(7), .bigint(42)).description == "(7, 42)")
    }

    @Test("canonical encodings tell apart keys that print alike")
    func canonicalEncodingsDiffer() {
        let keys = [RecordKey(.text("1")), RecordKey(.bigint(1)), RecordKey(.bigint(1), .bigint(2)), RecordKey(.text("1"), .text("2")),
                    RecordKey(.text("12"))]
        let encodings = keys.map { key in
            var encoder = CanonicalEncoder()
            key.encode(into: &encoder)
            return encoder.bytes
        }
        #expect(Set(encodings).count == keys.count)
    }

    @Test("a request's fingerprint names the plan, so two entities' identical requests differ")
    func fingerprintNamesThePlan() {
        let order = SaveRequest<ContractOrders>(operationScope: "s", operationID: "o", key: RecordKey(.bigint(1)),
                                                expectedRevision: 0, content: .paid)
        let note = SaveRequest<ContractTenantNotes>(operationScope: "s", operationID: "o", key: RecordKey(.bigint(1), .bigint(1)),
                                                    expectedRevision: 0, content: "paid")
        #expect(order.canonicalEncoding != note.canonicalEncoding)
        var other = order
        other.content = .shipped
        #expect(order.canonicalEncoding != other.canonicalEncoding)
    }

    @Test("a key of the wrong kind or length is invalid")
    func keyShape() {
        var request = SaveRequest<ContractOrders>(operationScope: "s", operationID: "o", key: RecordKey(.text("1")),
                                                  expectedRevision: 0, content: .paid)
        #expect(request.violation == .keyShape(expected: 1))
        request.key = RecordKey(.bigint(1), .bigint(2))
        #expect(request.violation == .keyShape(expected: 1))
        request.key = RecordKey(.bigint(1))
        #expect(request.violation == nil)
        let draft = SaveRequest<DraftRecords>(operationScope: "s", operationID: "o", key: RecordKey(.text("a\u{0}")),
                                              expectedRevision: 0, content: DraftContent(title: "t"))
        #expect(draft.violation == .containsNUL(.keyPart(index: 0)))
    }
}
