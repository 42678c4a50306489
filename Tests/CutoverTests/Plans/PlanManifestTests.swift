import Cutover
import Testing

@Suite("Reading valid plan manifests")
struct PlanManifestTests {
    private typealias Samples = PlanManifestSamples

    @Test("the documented manifest reads into the expected plan")
    func fullManifest() throws {
        let plan = try Samples.read(Samples.full).get()
        #expect(plan.name == "drafts")
        #expect(plan.table == "drafts")
        #expect(plan.legacyApplicationPattern == "legacy-%")
        #expect(plan.modernWriterWindow == .seconds(600))
        #expect(plan.steps.map(\.kind) == [.expand, .switch, .backfill, .contract])

        let expand = try #require(plan.step(.expand))
        #expect(expand.apply.map(\.path) == ["expand.sql", "expand_index.sql"])
        #expect(expand.apply.map(\.runsInTransaction) == [true, false])
        #expect(expand.revert.map(\.path) == ["expand_revert.sql"])
        #expect(expand.revert.map(\.runsInTransaction) == [true])
        #expect(expand.backfill == nil)
        #expect(expand.checks.count == 1)
        let present = try #require(expand.checks.first)
        #expect(present.name == "legacy table present")
        #expect(present.query == .inline("SELECT count(*) FROM pg_tables WHERE tablename = 'drafts'"))
        #expect(present.expectation == .compare(.equal, .number("1")))
        #expect(present.message == "the drafts table must exist")

        let switchStep = try #require(plan.step(.switch))
        #expect(switchStep.apply.isEmpty && switchStep.revert.isEmpty && switchStep.checks.isEmpty)
        #expect(switchStep.backfill == nil)

        let backfill = try #require(plan.step(.backfill)?.backfill)
        #expect(backfill.batch.path == "backfill_batch.sql" && backfill.batch.runsInTransaction)
        #expect(backfill.remaining.path == "backfill_remaining.sql")
        #expect(backfill.batchSize == 1000)

        let contract = try #require(plan.step(.contract))
        #expect(contract.apply.map(\.path) == ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"])
        #expect(contract.revert.isEmpty)
        #expect(contract.checks.map(\.query) == [.file(path: "checks/v1_only.sql")])
        #expect(contract.checks.map(\.expectation) == [.compare(.equal, .number("0"))])
    }

    @Test("the plan lists every SQL file it names, in manifest order")
    func sqlFilePaths() throws {
        let plan = try Samples.read(Samples.full).get()
        #expect(plan.sqlFilePaths == [
            "expand.sql", "expand_index.sql", "expand_revert.sql", "backfill_batch.sql", "backfill_remaining.sql",
            "contract_constraint.sql", "contract_validate.sql", "contract_drop.sql", "checks/v1_only.sql",
        ])
    }

    @Test("a file named by two steps is listed once")
    func sharedFilesListedOnce() throws {
        let manifest = Samples.editing(replacing: #""revert": ["expand_revert.sql"]"#,
                                       with: #""revert": ["contract_drop.sql", "checks/v1_only.sql"]"#)
        let plan = try Samples.read(manifest).get()
        #expect(plan.sqlFilePaths == [
            "expand.sql", "expand_index.sql", "contract_drop.sql", "checks/v1_only.sql", "backfill_batch.sql",
            "backfill_remaining.sql", "contract_constraint.sql", "contract_validate.sql",
        ])
    }

    @Test("the smallest manifest takes the defaults and leaves switch out")
    func minimalManifest() throws {
        let plan = try Samples.read(Samples.minimal).get()
        #expect(plan.legacyApplicationPattern == nil)
        #expect(plan.modernWriterWindow == .zero)
        #expect(plan.steps.map(\.kind) == [.expand, .backfill, .contract])
        #expect(plan.step(.switch) == nil)
        #expect(plan.step(.contract)?.revert == [])
        #expect(plan.steps.allSatisfy { $0.checks.isEmpty })
        #expect(plan.sqlFilePaths == ["a.sql", "r.sql", "b.sql", "n.sql", "c.sql"])
    }

    @Test("a contract may name revert files, which undo what its files before the last did")
    func contractRevert() throws {
        let manifest = Samples.editing(replacing: #""kind": "contract","#,
                                       with: #""kind": "contract", "revert": ["contract_revert.sql"],"#)
        let plan = try Samples.read(manifest).get()
        #expect(plan.step(.contract)?.revert.map(\.path) == ["contract_revert.sql"])
        #expect(plan.step(for: .revertContract)?.kind == .contract)
        #expect(plan.sqlFilePaths.contains("contract_revert.sql"))
    }

    @Test("a backfill without a batch size converts 1,000 rows a batch, without a pause")
    func defaultBatchSize() throws {
        let manifest = Samples.editing(replacing: #", "batchSize": 1000"#, with: "")
        let backfill = try #require(try Samples.read(manifest).get().step(.backfill)?.backfill)
        #expect(backfill.batchSize == PlanLimits.defaultBatchSize)
        #expect(backfill.niceRatio == 0 && PlanLimits.defaultNiceRatio == 0)
    }

    @Test("a backfill meets a batch time of 50 ms unless its step sets one, and holds its batches as its throttle keys say")
    func backfillThrottle() throws {
        let plain = try #require(try Samples.read(Samples.full).get().step(.backfill)?.backfill)
        #expect(plain.throttle == .standard && plain.throttle.targetBatchTime == .milliseconds(50))
        #expect(plain.throttle.maximumActiveSessions == nil && plain.throttle.throttleQuery == nil)
        let manifest = Samples.editing(replacing: #""batchSize": 1000"#, with: #"""
            "batchSize": 1000, "targetBatchTime": "0s", "maxActiveSessions": 40,
            "throttleQuery": "SELECT count(*) > 3\nFROM pg_locks WHERE NOT granted"
            """#)
        let throttle = try #require(try Samples.read(manifest).get().step(.backfill)?.backfill).throttle
        #expect(throttle == PlanBackfillThrottle(targetBatchTime: .zero, maximumActiveSessions: 40,
                                                 throttleQuery: "SELECT count(*) > 3\nFROM pg_locks WHERE NOT granted"))
    }

    @Test("a backfill's nice ratio is read as written, fraction and exponent included", arguments: [
        ("0.25", 0.25), ("0", 0), ("1", 1), ("100", 100), ("2.5e-1", 0.25), ("1E1", 10), ("0.0", 0),
    ])
    func niceRatio(literal: String, expected: Double) throws {
        let manifest = Samples.editing(replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "niceRatio": "# + literal)
        #expect(try Samples.read(manifest).get().step(.backfill)?.backfill?.niceRatio == expected)
    }

    @Test("each phase step draws on the plan step of its kind")
    func phaseStepsFindTheirPlanStep() throws {
        let plan = try Samples.read(Samples.full).get()
        let kinds = PhaseStep.allCases.map { plan.step(for: $0)?.kind }
        #expect(kinds == [.expand, .switch, .switch, .backfill, .contract, .expand, .contract])
    }

    @Test("a file object may leave out transaction, which then defaults to true")
    func transactionDefault() throws {
        let manifest = Samples.editing(replacing: #""revert": ["expand_revert.sql"]"#,
                                       with: #""revert": [{"file": "expand_revert.sql"}]"#)
        #expect(try Samples.read(manifest).get().step(.expand)?.revert == Samples.read(Samples.full).get()
            .step(.expand)?.revert)
        #expect(try Samples.read(manifest).get().step(.expand)?.revert.first?.runsInTransaction == true)
    }

    @Test("durations read in seconds, minutes, hours and days, from 0s to 366d",
          arguments: [("0s", 0), ("0d", 0), ("30s", 30), ("10m", 600), ("2h", 7_200), ("7d", 604_800),
                      ("007m", 420), ("8784h", 31_622_400), ("366d", 31_622_400), ("31622400s", 31_622_400)])
    func durations(text: String, seconds: Int64) throws {
        let manifest = Samples.editing(replacing: #""10m""#, with: "\"\(text)\"")
        #expect(try Samples.read(manifest).get().modernWriterWindow == .seconds(seconds))
    }

    @Test("every limit's boundary itself is accepted")
    func boundariesAreAccepted() throws {
        let longSQL = "SELECT 1" + String(repeating: " ", count: PlanLimits.inlineSQLLength.upperBound - 8)
        let checks = (0..<PlanLimits.maximumListCount).map { index in
            #"{"name": "check \#(index)", "sql": "SELECT 1", "expect": "= 1", "message": "m"}"#
        }
        let files = (0..<PlanLimits.maximumListCount).map { #""apply_\#($0).sql""# }
        let edits: [(String, String)] = [
            (#""name": "drafts""#, "\"name\": \"\(String(repeating: "n", count: 128))\""),
            (#""table": "drafts""#, "\"table\": \"\(String(repeating: "\u{E9}", count: 31))t\""),
            (#""legacy-%""#, "\"\(String(repeating: "%", count: 256))\""),
            (#""batchSize": 1000"#, #""batchSize": 1000000"#),
            (#""expand.sql", "#, "\"\(String(repeating: "d/", count: 125))x.sql\", "),
            (#""the drafts table must exist""#, "\"\(String(repeating: "m", count: 1_024))\""),
            (#""SELECT count(*) FROM pg_tables WHERE tablename = 'drafts'""#, "\"\(longSQL)\""),
            (#""= 1""#, "\"= '\(String(repeating: "x", count: 252))'\""),
            (#""name": "legacy table present""#, "\"name\": \"\(String(repeating: "c", count: 128))\""),
            (#"{"kind": "switch"}"#, "{\"kind\": \"switch\", \"checks\": [\(checks.joined(separator: ", "))]}"),
            (#""apply": ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"]"#,
             "\"apply\": [\(files.joined(separator: ", "))]"),
        ]
        for (target, replacement) in edits {
            let manifest = Samples.editing(replacing: target, with: replacement)
            #expect(Samples.refusal(of: manifest) == "accepted", "\(target.prefix(40))")
        }
    }

    @Test("inline SQL may hold tabs and line breaks")
    func inlineSQLLineBreaks() throws {
        let manifest = Samples.editing(replacing: #""sql": "SELECT count(*)"#, with: #""sql": "SELECT\r\n\tcount(*)"#)
        let check = try #require(Samples.read(manifest).get().step(.expand)?.checks.first)
        #expect(check.query == .inline("SELECT\r\n\tcount(*) FROM pg_tables WHERE tablename = 'drafts'"))
    }

    @Test("whitespace and key order do not matter")
    func layoutDoesNotMatter() throws {
        let reordered = #"""
            {"steps":[{"revert":["expand_revert.sql"],"checks":[{"message":"the drafts table must exist","expect":"= 1",
            "sql":"SELECT count(*) FROM pg_tables WHERE tablename = 'drafts'","name":"legacy table present"}],
            "apply":[{"transaction":false,"file":"expand_index.sql"}],"kind":"expand"},{"kind":"switch"},
            {"batchSize":1000,"remaining":"backfill_remaining.sql","batch":"backfill_batch.sql","kind":"backfill"},
            {"checks":[{"expect":"= 0","message":"backfill must finish first","sqlFile":"checks/v1_only.sql",
            "name":"no v1-only rows"}],"kind":"contract","apply":["contract_constraint.sql","contract_validate.sql",
            "contract_drop.sql"]}],"modernWriterWindow":"10m","legacyApplicationPattern":"legacy-%","table":"drafts",
            "name":"drafts","format":1}
            """#
        let plan = try Samples.read(reordered).get()
        let full = try Samples.read(Samples.full).get()
        #expect(plan.steps.dropFirst() == full.steps.dropFirst())
        #expect(plan.step(.expand)?.apply.map(\.path) == ["expand_index.sql"])
        #expect(plan.name == full.name && plan.table == full.table && plan.modernWriterWindow == full.modernWriterWindow)
    }
}

/// A declarative plan's `backfill` object carries its throttle into the compiled backfill step.
@Suite("A declarative plan's backfill pace")
struct DeclarativeBackfillPaceTests {
    @Test func theCompiledBackfillStepMeetsThePlansTargetsAndThrottle() throws {
        let manifest = Array("""
            {"format": 2, "name": "n", "table": "orders", "key": "id",
             "backfill": {"batchSize": 200, "targetBatchTime": "1s", "maxActiveSessions": 12, "throttleQuery": "SELECT false"},
             "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"}, "up": "1", "down": "'x'"}}]}
            """.utf8)
        let backfill = try #require(try DeclarativePlan(manifest: manifest).compile().plan.step(.backfill)?.backfill)
        #expect(backfill.batchSize == 200)
        #expect(backfill.throttle == PlanBackfillThrottle(targetBatchTime: .seconds(1), maximumActiveSessions: 12, throttleQuery: "SELECT false"))
    }
}
