import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import PostgresClient
import Testing

/// The JSON the record store sends, read back by PostgreSQL as the values it was made from.
@Suite("RecordJSON")
struct RecordJSONTests {
    static let texts = ["it's \"quoted\"", "back\\slash \\x00 \\\\", "tab\tnew\nline\r\u{8}\u{C}\u{1}\u{1F}",
                        "emoji 👩‍👩‍👧 and é (e\u{301})", "{\"version\": 2, \"title\": \"a/b\"}", ""]

    @Test(.timeLimit(.minutes(2)))
    func columnsAndKeysReadBackAsTheirValues() async throws {
        let database = try await TestPostgres.database("record_json")
        let values: [String: RecordColumnValue] = Dictionary(uniqueKeysWithValues: Self.texts.enumerated().map { ("c\($0.offset)", .text($0.element)) })
            .merging(["n": .integer(-42), "b": .boolean(true), "z": .null, "quote\"name": .text("x")]) { first, _ in first }
        let columns = RecordJSON.columns(values)
        let key = RecordJSON.key(RecordKey(.text(Self.texts[0]), .bigint(7)),
                                 columns: [RecordKeyColumn(name: "tenant", kind: .text), RecordKeyColumn(name: "id", kind: .bigint)])
        let (read, keyRead) = try await onThread {
            let connection = try database.connect()
            let rows = try connection.query(PostgresQuery(
                unsafeSQL: "SELECT e.key AS name, jsonb_typeof(e.value) AS kind, e.value #>> '{}' AS value FROM jsonb_each($1::jsonb) AS e",
                binds: [PostgresBind(utf8Text: columns, type: .jsonb)]))
            let read = try Dictionary(uniqueKeysWithValues: rows.map {
                (try $0.decode(String.self, "name"), RecordJSON.value(kind: try $0.decode(String.self, "kind"), text: try $0.decode(String?.self, "value")))
            })
            let keyRead = try connection.query(PostgresQuery(
                unsafeSQL: "SELECT ($1::jsonb ->> 'tenant') || '|' || ($1::jsonb -> 'id')::text AS key",
                binds: [PostgresBind(utf8Text: key, type: .jsonb)]))[0].decode(String.self, "key")
            return (read, keyRead)
        }
        #expect(read == values)
        #expect(keyRead == Self.texts[0] + "|7")
    }
}
