import CommandLineKit
import PhaseCLI
import Testing

@Suite("Value types")
struct ValueTypeTests {
    @Test("durations in one or more units", arguments: [
        ("500ms", Duration.milliseconds(500)), ("2s", .seconds(2)), ("5m", .seconds(300)),
        ("7d", .seconds(604_800)), ("1h", .seconds(3_600)), ("1h30m", .seconds(5_400)),
        ("1d2h3m4s5ms", .milliseconds(93_784_005)), ("0s", .zero),
    ])
    func durationParses(text: String, expected: Duration) throws {
        #expect(try ValueType.duration.parse(text).get() == expected)
    }

    @Test("malformed durations say what is wrong", arguments: [
        ("", "expected a duration such as 500ms, 2s, 5m or 7d"),
        ("s", "expected a duration such as 500ms, 2s, 5m or 7d"),
        ("-2s", "expected a duration such as 500ms, 2s, 5m or 7d"),
        ("2", "missing a unit after '2' (use ms, s, m, h or d)"),
        ("1h30", "missing a unit after '30' (use ms, s, m, h or d)"),
        ("2w", "unknown unit 'w' (use ms, s, m, h or d)"),
        ("5sec", "unknown unit 'sec' (use ms, s, m, h or d)"),
        ("5s5m", "units must go from largest to smallest, each at most once"),
        ("1s1s", "units must go from largest to smallest, each at most once"),
        ("99999999999999999999d", "must be shorter"),
        ("999999999999999d", "must be shorter"),
    ])
    func durationRejects(text: String, reason: String) {
        #expect(ValueType.duration.parse(text) == .failure(InvalidValue(reason: reason)))
    }

    @Test("durations are written in the form they are read", arguments: [
        (Duration.zero, "0s"), (.milliseconds(500), "500ms"), (.seconds(90), "1m30s"),
        (.seconds(604_800), "7d"), (.milliseconds(93_784_005), "1d2h3m4s5ms"), (.seconds(-90), "-1m30s"),
    ])
    func durationFormats(duration: Duration, text: String) throws {
        #expect(ValueType.duration.format(duration) == text)
        if duration >= .zero { #expect(try ValueType.duration.parse(text).get() == duration) }
    }

    @Test func integersAreCheckedAgainstTheirRange() {
        let type = ValueType.integer(in: 1...100_000)
        #expect(type.parse("1") == .success(1))
        #expect(type.parse("100000") == .success(100_000))
        #expect(type.parse("0") == .failure(InvalidValue(reason: "must be between 1 and 100000")))
        #expect(type.parse("100001") == .failure(InvalidValue(reason: "must be between 1 and 100000")))
        #expect(type.parse("1e3") == .failure(InvalidValue(reason: "must be a whole number")))
        #expect(type.parse("") == .failure(InvalidValue(reason: "must be a whole number")))
        #expect(ValueType.integer(atLeast: 0).parse("-1") == .failure(InvalidValue(reason: "must be at least 0")))
        #expect(ValueType.integer.parse("-1") == .success(-1))
    }

    @Test func decimalsAreDigitsWithAnOptionalFractionWithinTheirRange() {
        let type = ValueType.decimal(in: 0...100)
        #expect(type.parse("0.25") == .success(0.25))
        #expect(type.parse("0") == .success(0))
        #expect(type.parse("100") == .success(100))
        #expect(type.parse("007.50") == .success(7.5))
        #expect(type.parse("100.01") == .failure(InvalidValue(reason: "must be between 0 and 100")))
        for text in ["", ".5", "5.", "1.2.3", "-1", "+1", "1e3", "inf", "nan", "0x10", " 1", "1,5"] {
            #expect(type.parse(text) == .failure(InvalidValue(reason: "must be a number such as 0.25")), "\(text)")
        }
        #expect(type.format(0) == "0" && type.format(0.25) == "0.25" && type.format(100) == "100")
    }

    @Test func durationsAreCheckedAgainstTheirBoundsInTheirOwnUnits() {
        let type = ValueType.duration(atLeast: .seconds(86_400))
        #expect(type.parse("24h") == .success(.seconds(86_400)))
        #expect(type.parse("23h59m") == .failure(InvalidValue(reason: "must be at least 1d")))
        let bounded = ValueType.duration(in: .milliseconds(10) ... .seconds(60))
        #expect(bounded.parse("5ms") == .failure(InvalidValue(reason: "must be between 10ms and 1m")))
    }

    @Test func choicesAcceptOnlyTheirWordsAndSuggestACloseOne() {
        let type = ValueType.choice(SamplePath.self)
        #expect(type.parse("modern") == .success(.modern))
        #expect(type.parse("modren") == .failure(InvalidValue(reason: "must be one of legacy, modern", suggestion: "modern")))
        #expect(type.parse("Legacy") == .failure(InvalidValue(reason: "must be one of legacy, modern", suggestion: "legacy")))
        #expect(type.parse("sideways") == .failure(InvalidValue(reason: "must be one of legacy, modern")))
        let numbered = ValueType.choice(["one": 1, "two": 2])
        #expect(numbered.parse("two") == .success(2))
        #expect(numbered.parse("three") == .failure(InvalidValue(reason: "must be one of one, two")))
        #expect(numbered.format(1) == "one")
    }

    @Test func commaSeparatedValuesAreEachChecked() {
        let type = ValueType.commaSeparated(.integer(in: 1...200))
        #expect(type.parse("1,8,32") == .success([1, 8, 32]))
        #expect(type.parse("1,0") == .failure(InvalidValue(reason: "'0' must be between 1 and 200")))
        #expect(type.parse("") == .failure(InvalidValue(reason: "'' must be a whole number")))
        #expect(type.format([1, 8]) == "1,8")
    }

    @Test func aValueTypeOfOnesOwnIsUsedByTheParser() throws {
        let even = ValueType<Int>(constraint: "even", parse: { text in
            guard let number = Int(text), number % 2 == 0 else { return .failure(InvalidValue(reason: "must be even")) }
            return .success(number)
        }, format: String.init)
        let count = Option("count", type: even, default: 2, help: "An even count.")
        let program = CommandLineProgram(root: CommandSpec("tool", abstract: "A tool.", parameters: [count]))
        #expect(program.parse(["--count", "4"]).command?[count] == 4)
        #expect(program.parse(["--count", "3"]).usageError?.message == "invalid value '3' for '--count': must be even")
    }
}
