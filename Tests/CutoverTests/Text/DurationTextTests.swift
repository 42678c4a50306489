import Cutover
import Testing

/// The one duration grammar of the command line, `plan.json` and the runner's messages.
@Suite("Duration text")
struct DurationTextTests {
    @Test("durations in one or more units", arguments: [
        ("500ms", Duration.milliseconds(500)), ("2s", .seconds(2)), ("5m", .seconds(300)),
        ("7d", .seconds(604_800)), ("1h", .seconds(3_600)), ("1h30m", .seconds(5_400)),
        ("1d2h3m4s5ms", .milliseconds(93_784_005)), ("0s", .zero), ("007m", .seconds(420)),
    ])
    func parses(text: String, expected: Duration) throws {
        #expect(try DurationText.parse(text) == expected)
    }

    @Test("malformed durations say what is wrong", arguments: [
        ("", DurationSyntaxError.notADuration), ("s", .notADuration), ("-2s", .notADuration), (" 2s", .notADuration),
        ("١٠m", .notADuration), ("2", .missingUnit(after: "2")), ("1h30", .missingUnit(after: "30")),
        ("2w", .unknownUnit("w")), ("5sec", .unknownUnit("sec")), ("10M", .unknownUnit("M")),
        ("5s5m", .unitsOutOfOrder), ("1s1s", .unitsOutOfOrder),
        ("99999999999999999999d", .tooLong), ("999999999999999d", .tooLong),
    ])
    func rejects(text: String, error: DurationSyntaxError) {
        #expect(throws: error) { try DurationText.parse(text) }
    }

    @Test func eachRefusalIsOnePhrase() {
        #expect(DurationSyntaxError.missingUnit(after: "30").description == "missing a unit after '30' (use ms, s, m, h or d)")
        #expect(DurationSyntaxError.notADuration.description == "expected a duration such as 500ms, 2s, 5m or 7d")
    }

    @Test("durations are written in the form they are read", arguments: [
        (Duration.zero, "0s"), (.milliseconds(500), "500ms"), (.seconds(90), "1m30s"),
        (.seconds(604_800), "7d"), (.milliseconds(93_784_005), "1d2h3m4s5ms"), (.seconds(-90), "-1m30s"),
    ])
    func formats(duration: Duration, text: String) throws {
        #expect(DurationText.format(duration) == text)
        if duration >= .zero { #expect(try DurationText.parse(text) == duration) }
    }

    @Test func messagesMayRoundToAWholeUnit() throws {
        #expect(DurationText.format(.milliseconds(192_457), smallestUnit: .seconds) == "3m12s")
        #expect(DurationText.format(.milliseconds(7_530_000), smallestUnit: .minutes) == "2h5m")
        #expect(DurationText.format(.milliseconds(400), smallestUnit: .seconds) == "0s")
        #expect(try DurationText.parse(DurationText.format(.milliseconds(192_457), smallestUnit: .seconds)) == .seconds(192))
    }

    @Test("plan.json reads the same grammar, milliseconds included", arguments: [
        ("1500ms", Duration.milliseconds(1_500)), ("1h30m", .seconds(5_400)), ("2m30s250ms", .milliseconds(150_250)),
    ])
    func planDurations(text: String, expected: Duration) throws {
        let manifest = PlanManifestSamples.editing(replacing: #""10m""#, with: "\"\(text)\"")
        #expect(try PlanManifestSamples.read(manifest).get().modernWriterWindow == expected)
    }
}
