import Cutover
import Testing

/// A plan's `table` and `phase new --table`: each part as the catalog spells it, or quoted as
/// SQL writes it, read and written back alike.
@Suite("A table's name as a plan writes it")
struct QualifiedNameTests {
    @Test("a name is read into its parts", arguments: [
        ("orders", nil, "orders"),
        ("public.orders", "public", "orders"),
        ("Sales Data.Order Items", "Sales Data", "Order Items"),
        (#""Sales Data"."Order Items""#, "Sales Data", "Order Items"),
        (#"public."a.b""#, "public", "a.b"),
        (#""x.y".z"#, "x.y", "z"),
        (#""say ""hi""""#, nil, #"say "hi""#),
        (#""Orders""#, nil, "Orders"),
    ] as [(String, String?, String)])
    func reads(text: String, schema: String?, name: String) throws {
        let parsed = try #require(QualifiedName(planText: text))
        #expect(parsed.schema == schema)
        #expect(parsed.name == name)
        #expect(QualifiedName(planText: parsed.planText) == parsed)
    }

    @Test("what is not one or two parts of 1 to 63 bytes is refused", arguments: [
        "", ".", "a.", ".a", "a.b.c", #""a"b"#, #""a"#, #"a"b"#, #""""#, #""a".."b""#,
        String(repeating: "n", count: 64), "s." + String(repeating: "n", count: 64),
        "\"" + String(repeating: "n", count: 64) + "\"",
    ])
    func refuses(text: String) {
        #expect(QualifiedName(planText: text) == nil)
    }

    @Test func aPartIsQuotedOnlyWhenItMustBe() {
        #expect(QualifiedName(schema: "public", name: "orders").planText == "public.orders")
        #expect(QualifiedName(schema: "Sales Data", name: "Order Items").planText == "Sales Data.Order Items")
        #expect(QualifiedName(schema: "public", name: "a.b").planText == #"public."a.b""#)
        #expect(QualifiedName(schema: nil, name: #"say "hi""#).planText == #""say ""hi""""#)
        // A name of 63 bytes, every one a double quote, is written in 128 characters and read back.
        let quotes = QualifiedName(schema: nil, name: String(repeating: "\"", count: 63))
        #expect(QualifiedName(planText: quotes.planText) == quotes)
    }
}
