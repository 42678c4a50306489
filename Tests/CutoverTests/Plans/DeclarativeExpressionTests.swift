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

    static let fields: [(String, String?)] = [
        ("CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END", "CASE NEW.status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END"),
        ("jsonb_set(coalesce(document, '{}'::jsonb), '{title}', to_jsonb(title))",
         "jsonb_set(coalesce(NEW.document, '{}'::jsonb), '{title}', to_jsonb(NEW.title))"),
        ("CAST(amount AS numeric(10, 2)) * 100", "CAST(NEW.amount AS numeric(10, 2)) * 100"),
        ("created_at AT TIME ZONE 'UTC' > timestamp '2024-01-01'", "NEW.created_at AT TIME ZONE 'UTC' > timestamp '2024-01-01'"),
        ("amount::double precision", "NEW.amount::double precision"),
        ("public.normalise(\"Mail\") COLLATE \"C\"", "public.normalise(NEW.\"Mail\") COLLATE \"C\""),
        ("status::public.mood", "NEW.status::public.mood"),
        ("NAME IS NOT DISTINCT FROM nick", "NEW.name IS NOT DISTINCT FROM NEW.nick"),
        ("make_interval(days => n)", "make_interval(days => NEW.n)"),
        ("extract(year FROM born) + interval '1' day", "extract(year FROM NEW.born) + interval '1' day"),
        ("\"select\" || x", "NEW.\"select\" || NEW.x"),
        // A bare unreserved keyword may be a column the reader does not count: the call stays.
        ("year * 100 + month", nil),
        ("t.status", nil),
        ("status IS JSON", nil),
    ]

    @Test("an expression reads the row's fields where every word is surely a reference or surely not a column",
          arguments: fields)
    func readsFields(_ text: String, _ expected: String?) throws {
        #expect(try SQLExpression.read(text).get().fields(of: "NEW") == expected)
    }

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
