@testable import Cutover
import Testing

@Suite("Reading SQL expressions over a row")
struct DeclarativeExpressionTests {
    static let references: [(String, [String])] = [
        ("CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END", ["status"]),
        ("'description for ' || name", ["name"]),
        ("split_part(full_name, ' ', 1)", ["full_name"]),
        ("jsonb_set(coalesce(document, '{}'::jsonb), '{title}', to_jsonb(title))", ["document", "title"]),
        ("CAST(amount AS numeric(10, 2)) * 100", ["amount"]),
        ("created_at AT TIME ZONE 'UTC' > timestamp '2024-01-01'", ["created_at"]),
        ("amount::double precision", ["amount"]),
        ("public.normalise(\"Mail\") COLLATE \"C\"", ["Mail"]),
        ("E'it\\'s ' || x", ["x"]),
        ("NAME IS NOT DISTINCT FROM nick", ["name", "nick"]),
        ("current_timestamp", []),
        ("make_interval(days => n)", ["n"]),
    ]

    @Test("the column references are found, and nothing else", arguments: references)
    func finds(_ text: String, _ columns: [String]) throws {
        #expect(try SQLExpression.read(text).get().columns == columns)
    }

    @Test("text that is not one expression over the row is refused")
    func refuses() {
        let cases: [(String, SQLExpressionProblem)] = [
            ("", .empty), ("   ", .empty), ("a; b", .semicolon), ("a /* b */", .comment), ("$$x$$", .dollar),
            ("(VALUES (1))", .query("values")), ("a)", .unbalanced), ("[a", .unbalanced), ("'a", .unterminatedString),
            ("E'a\\'", .unterminatedString), ("\"a", .unterminatedIdentifier), ("\"\"", .unterminatedIdentifier),
            ("a \\ b", .unexpected("\\")),
        ]
        for (text, problem) in cases {
            #expect(throws: problem) { try SQLExpression.read(text).get() }
        }
    }

    @Test("identifiers are bare only where PostgreSQL reads them back unchanged")
    func quoting() {
        #expect(SQLName.identifier("status_code") == "status_code")
        #expect(SQLName.identifier("Order") == "\"Order\"")
        #expect(SQLName.identifier("select") == "\"select\"")
        #expect(SQLName.identifier("a\"b") == "\"a\"\"b\"")
        #expect(SQLName.identifier("1a") == "\"1a\"")
        #expect(SQLName.literal("it's") == "'it''s'")
        #expect(QualifiedName(schema: "Sales", name: "orders").sql == "\"Sales\".orders")
    }
}
