import Foundation
import Testing
@testable import PostgresClient

@Suite("Text formats")
struct TextFormatTests {
    @Test("timestamps in the ISO style parse with their offsets", arguments: [
        ("2026-11-30 12:15:00+00", 1_796_040_900.0),
        ("2026-11-30 12:15:00.25+00", 1_796_040_900.25),
        ("2026-11-30 14:15:00+02", 1_796_040_900.0),
        ("2026-11-30 06:45:00-05:30", 1_796_040_900.0),
        ("2026-11-30 12:15:00", 1_796_040_900.0),
        ("2026-11-30", 1_795_996_800.0),
    ])
    func parsesTimestamps(text: String, seconds: Double) throws {
        let date = try #require(PostgresTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test("malformed timestamps are refused", arguments: ["", "infinity", "2026-11-30 12:15", "2026-1-30", "2026-11-30 12:15:00+"])
    func refusesMalformedTimestamps(text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }

    @Test func timestampsRoundTripWithMicroseconds() throws {
        let date = Date(timeIntervalSince1970: 1_796_040_900.123456)
        let text = PostgresTimestamp.format(date)
        #expect(text == "2026-11-30 12:15:00.123456+00")
        let parsed = try #require(PostgresTimestamp.parse(text))
        #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
    }

    @Test func byteaHexRoundTrips() {
        let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xff]
        #expect(PostgresBytes.hex(bytes) == "\\x00017f80ff")
        #expect(PostgresBytes.parse("\\x00017F80ff") == bytes)
        #expect(PostgresBytes.parse("\\x0") == nil)
        #expect(PostgresBytes.parse("00") == nil)
        #expect(PostgresBytes.parse("\\xzz") == nil)
    }

    @Test func bindsAreEqualWhenTheySendTheSameValueWhateverFormTheyHoldItIn() {
        let bytes: [UInt8] = [0, 0x5c, 0xff]
        let bytea = PostgresBind(bytea: bytes)
        #expect(bytea.isBinary)
        #expect(bytea.type == .bytea)
        #expect(bytea.text == "\\x005cff")
        #expect(bytea == PostgresBind(text: "\\x005cff", type: .bytea))
        #expect(bytes.postgresBind == bytea)
        #expect(Data(bytes).postgresBind == bytea)
        #expect(bytea != PostgresBind(text: "\\x005cff"))

        let utf8 = PostgresBind(utf8Text: Array("{\"title\": \"Grüße\"}".utf8), type: .jsonb)
        #expect(!utf8.isBinary)
        #expect(utf8.text == "{\"title\": \"Grüße\"}")
        #expect(utf8 == PostgresBind(text: "{\"title\": \"Grüße\"}", type: .jsonb))

        var changed = bytea
        changed.text = "\\x00"
        #expect(!changed.isBinary)
        changed.text = nil
        #expect(changed == PostgresBind(text: nil, type: .bytea))
    }

    @Test func queriesNumberTheirParametersAndQuoteNothingInline() {
        let title = "it's $1; DROP TABLE drafts"
        let query: PostgresQuery = "UPDATE \(identifier: "drafts") SET title = \(title) WHERE id = \(42) AND note = \(String?.none)"
        #expect(query.description == "UPDATE \"drafts\" SET title = $1 WHERE id = $2 AND note = $3")
        #expect(query.binds == [PostgresBind(text: title), PostgresBind(text: "42", type: .int8), PostgresBind(text: nil)])
    }
}
