import Cutover
import Testing

/// A plan file's `serverVersion`: read from the manifest, refused when malformed, and deciding
/// which files a server of a given version runs.
@Suite("Plan files chosen by server version")
struct ServerVersionRangeTests {
    private typealias Samples = PlanManifestSamples

    @Test("ranges read as written", arguments: [
        (">= 18", CheckExpectation.Comparison.greaterOrEqual, 18), ("<18", .less, 18), ("= 15", .equal, 15),
        ("<= 16", .lessOrEqual, 16), ("> 14", .greater, 14), ("  >=  10 ", .greaterOrEqual, 10), ("<> 17", .notEqual, 17),
    ])
    func reads(text: String, comparison: CheckExpectation.Comparison, major: Int) throws {
        let range = try #require(ServerVersionRange(text))
        #expect(range.comparison == comparison && range.major == major)
        #expect(range.manifestText == "\(comparison.rawValue) \(major)")
    }

    @Test("anything else is no range", arguments: ["", "18", ">=", "=> 18", ">= 9", ">= 100", ">= 18.1", ">= 18.0", ">= 1e1", "~ 18", ">= -1", ">= 1 8", "= '18'", "is null"])
    func refuses(text: String) {
        #expect(ServerVersionRange(text) == nil)
    }

    @Test func aRangeComparesTheMajorOfServerVersionNum() throws {
        let from18 = try #require(ServerVersionRange(">= 18"))
        let before18 = try #require(ServerVersionRange("< 18"))
        for (number, isNew) in [(140_001, false), (150_015, false), (170_009, false), (180_000, true), (180_006, true), (190_000, true)] {
            #expect(from18.contains(serverVersionNumber: number) == isNew, "\(number)")
            #expect(before18.contains(serverVersionNumber: number) == !isNew, "\(number)")
        }
        #expect(try #require(ServerVersionRange("= 16")).contains(serverVersionNumber: 160_002))
        #expect(!(try #require(ServerVersionRange("= 16")).contains(serverVersionNumber: 170_000)))
        #expect(try #require(ServerVersionRange("<= 16")).contains(serverVersionNumber: 160_009))
        #expect(!(try #require(ServerVersionRange("> 16")).contains(serverVersionNumber: 160_009)))
    }

    @Test func aStepRunsOnlyTheFilesOfTheServersVersion() throws {
        let manifest = Samples.editing(
            replacing: #""apply": ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"]"#,
            with: #""apply": [{"file": "contract_constraint.sql", "serverVersion": "< 18"}, {"file": "contract_constraint_not_null.sql", "serverVersion": ">= 18"}, "contract_validate.sql", {"file": "contract_drop.sql", "transaction": true, "serverVersion": "<18"}]"#)
        let plan = try Samples.read(manifest).get()
        let contract = try #require(plan.step(.contract))
        #expect(contract.apply.map(\.serverVersion?.manifestText) == ["< 18", ">= 18", nil, "< 18"])
        #expect(contract.apply(onServerVersionNumber: 150_015).map(\.path)
            == ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"])
        #expect(contract.apply(onServerVersionNumber: 180_006).map(\.path)
            == ["contract_constraint_not_null.sql", "contract_validate.sql"])
        // Every file is the plan's, whatever the server: each is read and checksummed.
        #expect(plan.sqlFilePaths.contains("contract_constraint_not_null.sql"))
        #expect(plan.sqlFilePaths.contains("contract_constraint.sql"))
    }

    @Test("a malformed range is refused at its place", arguments: [
        (#"{"file": "expand_index.sql", "transaction": false, "serverVersion": "18+"}"#,
         #"steps[0].apply[1].serverVersion: expected a PostgreSQL major version range such as >= 18, < 18 or = 15; found "18+""#),
        (#"{"file": "expand_index.sql", "transaction": false, "serverVersion": 18}"#,
         "steps[0].apply[1].serverVersion: expected a string; found a number"),
    ])
    func malformed(entry: String, message: String) {
        let manifest = Samples.editing(replacing: #"{"file": "expand_index.sql", "transaction": false}"#, with: entry)
        #expect(Samples.refusal(of: manifest) == "plan.json: " + message)
    }
}
