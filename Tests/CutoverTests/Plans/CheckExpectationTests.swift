import Cutover
import Testing

@Suite("Check expectations")
struct CheckExpectationTests {
    @Test("expectations read into their parts and print canonically", arguments: [
        ("= 0", CheckExpectation.compare(.equal, .number("0")), "= 0"),
        ("=0", .compare(.equal, .number("0")), "= 0"),
        ("<= 100", .compare(.lessOrEqual, .number("100")), "<= 100"),
        ("> 0", .compare(.greater, .number("0")), "> 0"),
        ("< -1", .compare(.less, .number("-1")), "< -1"),
        ("  >=   -1.5e3  ", .compare(.greaterOrEqual, .number("-1.5e3")), ">= -1.5e3"),
        ("!= 0", .compare(.notEqual, .number("0")), "!= 0"),
        ("<> 0", .compare(.notEqual, .number("0")), "!= 0"),
        ("= true", .compare(.equal, .boolean(true)), "= true"),
        ("!= FALSE", .compare(.notEqual, .boolean(false)), "!= false"),
        ("= 'text'", .compare(.equal, .text("text")), "= 'text'"),
        ("= 'it''s'", .compare(.equal, .text("it's")), "= 'it''s'"),
        ("= ''", .compare(.equal, .text("")), "= ''"),
        ("= 'a = b'", .compare(.equal, .text("a = b")), "= 'a = b'"),
        ("is null", .isNull, "is null"),
        ("IS  Null", .isNull, "is null"),
        ("is not null", .isNotNull, "is not null"),
    ])
    func parsing(text: String, expected: CheckExpectation, canonical: String) {
        #expect(CheckExpectation(text) == expected)
        #expect(expected.description == canonical)
        #expect(CheckExpectation(canonical) == expected)
    }

    @Test("anything else is not an expectation", arguments: [
        "", " ", "0", "=", "= ", "== 0", "=> 0", "= 0 0", "< 'a'", ">= true", "= 'open", "= 'a'b'", "= .5", "= 5.",
        "= +5", "= 0x10", "= 1e", "= 1e1234567890", "= NaN", "= Infinity", "is nul", "is not", "not null",
        "= \"x\"", "≤ 1", "= \n0", "= '\u{0}'", "= ٣",
    ])
    func refusals(text: String) {
        #expect(CheckExpectation(text) == nil)
    }

    @Test("observed values meet or miss expectations", arguments: [
        // Numbers compare by value, exactly, whatever the spelling.
        ("= 0", "0", true), ("= 0", "0.0", true), ("= 0", "-0", true), ("= 0", "0e5", true), ("= 0", "00", true),
        ("= 0", "12", false), ("= 0", "abc", false), ("= 0", "", false), ("= 0", "NaN", false),
        ("!= 0", "12", true), ("!= 0", "0.000", false), ("!= 0", "abc", true), ("!= 0", "NaN", true),
        ("<= 100", "100", true), ("<= 100", "100.000", true), ("<= 100", "99.9999", true), ("<= 100", "1e2", true),
        ("<= 100", "100.0001", false), ("<= 100", "1.5e2", false), ("<= 100", "-1e9", true), ("<= 100", "abc", false),
        ("> 0", "0.000001", true), ("> 0", "1e-400", true), ("> 0", "0", false), ("> 0", "-1", false),
        ("> 0", "Infinity", false), ("< -1", "-2", true), ("< -1", "-1", false), ("< -1", "-0.5", false),
        (">= 1e2", "100", true), (">= 1e2", "99", false), ("= 1e-400", "1e-401", false),
        // Past a double's precision: 2^53 + 1 against 2^53.
        ("= 9007199254740993", "9007199254740992", false), ("> 9007199254740992", "9007199254740993", true),
        ("= 123456789012345678901234567890", "123456789012345678901234567890.000", true),
        // Booleans as PostgreSQL prints them.
        ("= true", "t", true), ("= true", "true", true), ("= true", "f", false), ("= true", "TRUE", false),
        ("= true", "yes", false), ("!= true", "f", true), ("!= true", "t", false), ("!= true", "x", true),
        ("= false", "f", true), ("= false", "false", true),
        // Text is exact.
        ("= 'ready'", "ready", true), ("= 'ready'", "Ready", false), ("= 'ready'", " ready", false),
        ("!= 'ready'", "done", true), ("= '12'", "12", true), ("= '12'", "12.0", false), ("= ''", "", true),
        ("= '\u{E9}'", "e\u{301}", false), ("!= '\u{E9}'", "e\u{301}", true),
        // NULL only meets is null.
        ("is null", "", false), ("is null", "NULL", false), ("is not null", "", true),
    ])
    func evaluation(expectation: String, observed: String, holds: Bool) throws {
        let parsed = try #require(CheckExpectation(expectation))
        #expect(parsed.evaluate(observed: observed) == holds)
    }

    @Test("NULL fails every comparison, != included, and meets only is null")
    func null() throws {
        for text in ["= 0", "!= 0", "< 1", ">= 0", "= true", "!= true", "= 'x'", "!= 'x'", "is not null"] {
            #expect(try #require(CheckExpectation(text)).evaluate(observed: nil) == false, "\(text)")
        }
        #expect(CheckExpectation.isNull.evaluate(observed: nil))
    }

    @Test("ordering text, built directly, never holds")
    func orderingText() {
        #expect(!CheckExpectation.compare(.less, .text("b")).evaluate(observed: "a"))
        #expect(!CheckExpectation.compare(.greaterOrEqual, .boolean(true)).evaluate(observed: "t"))
    }

    @Test("descriptions say what was expected and what was observed, cut short and escaped", arguments: [
        ("= 0", "12" as String?, "expected = 0, observed 12"),
        ("= 0", nil, "expected = 0, observed NULL"),
        ("<= 100", "1.5e2", "expected <= 100, observed 1.5e2"),
        ("= 'ready'", "pending", "expected = 'ready', observed 'pending'"),
        ("= 'ready'", "it's", "expected = 'ready', observed 'it''s'"),
        ("is null", "t", "expected is null, observed 't'"),
        ("is not null", nil, "expected is not null, observed NULL"),
        ("= 'x'", "a\nb\u{202E}", #"expected = 'x', observed 'a\u{A}b\u{202E}'"#),
        ("= 'x'", String(repeating: "y", count: 100),
         "expected = 'x', observed '\(String(repeating: "y", count: 40))'… (100 characters)"),
        ("= 0", String(repeating: "9", count: 50), "expected = 0, observed \(String(repeating: "9", count: 40))… (50 characters)"),
    ])
    func descriptions(expectation: String, observed: String?, line: String) throws {
        #expect(try #require(CheckExpectation(expectation)).describe(observed: observed) == line)
    }

    @Test("comparisons keep their manifest spellings")
    func spellings() {
        #expect(CheckExpectation.Comparison.allCases.map(\.rawValue) == ["=", "!=", "<", "<=", ">", ">="])
        #expect(CheckExpectation.Comparison.allCases.filter(\.isOrdering) == [.less, .lessOrEqual, .greater, .greaterOrEqual])
    }
}
