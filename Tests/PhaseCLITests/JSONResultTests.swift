import PhaseCLI
import Testing

@Suite("JSON results")
struct JSONResultTests {
    @Test func keysAreSortedByTheirBytesAtEveryDepth() {
        let value: JSONResult = ["b": 1, "a": ["z": true, "Z": false, "é": nil, "e": "x"], "B": []]
        #expect(value.text() == #"{"B":[],"a":{"Z":false,"e":"x","z":true,"é":null},"b":1}"#)
    }

    @Test func theSameValueAlwaysGivesTheSameText() {
        let members = (0..<50).map { ("key\($0)", JSONResult.integer(Int64($0))) }
        let forward = JSONResult.object(Dictionary(uniqueKeysWithValues: members))
        let backward = JSONResult.object(Dictionary(uniqueKeysWithValues: members.reversed()))
        #expect(forward.text() == backward.text())
        #expect(forward.text(.pretty) == backward.text(.pretty))
    }

    @Test func stringsEscapeWhatJSONRequiresAndWhatATerminalWouldObey() {
        let text = "quote \" backslash \\ slash / tab \t newline \n return \r backspace \u{08} feed \u{0C} nul \u{00} unit \u{1F} del \u{7F} csi \u{9B} nel \u{85} nbsp \u{A0} é 🚀"
        #expect(JSONResult.string(text).text()
                == #""quote \" backslash \\ slash / tab \t newline \n return \r backspace \b feed \f nul \u0000 unit \u001f del \u007f csi \u009b nel \u0085 nbsp "#
                + "\u{A0} é 🚀\"")
    }

    @Test func numbersAreValidJSON() {
        #expect(JSONResult.integer(Int64.min).text() == "-9223372036854775808")
        #expect(JSONResult.number(3).text() == "3")
        #expect(JSONResult.number(-0.0).text() == "0")
        #expect(JSONResult.number(0.25).text() == "0.25")
        #expect(JSONResult.number(1e-7).text() == "1e-07")
        #expect(JSONResult.number(1e300).text() == "1e+300")
        #expect(JSONResult.number(.nan).text() == "null")
        #expect(JSONResult.number(-.infinity).text() == "null")
    }

    @Test func prettyLayoutIndentsByTwoAndKeepsEmptyContainersShort() {
        let value: JSONResult = ["steps": ["expand", ["ok": true]], "empty": [:], "none": []]
        #expect(value.text(.pretty) == """
            {
              "empty": {},
              "none": [],
              "steps": [
                "expand",
                {
                  "ok": true
                }
              ]
            }
            """)
    }

    @Test func literalsBuildTheExpectedCases() {
        let value: JSONResult = ["n": nil, "b": false, "i": 2, "d": 2.5, "s": "x", "a": [1]]
        #expect(value == .object(["n": .null, "b": .bool(false), "i": .integer(2), "d": .number(2.5),
                                  "s": .string("x"), "a": .array([.integer(1)])]))
    }
}
