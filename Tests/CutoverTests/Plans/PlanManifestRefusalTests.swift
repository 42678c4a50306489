import Cutover
import Testing

@Suite("Refusing plan manifests that break a rule")
struct PlanManifestRefusalTests {
    private typealias Samples = PlanManifestSamples

    /// One edit of the documented manifest and the exact line that refuses it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let rule: String
        let manifest: String
        let message: String

        init(_ rule: String, replacing target: String, with replacement: String, _ message: String) {
            self.init(rule, manifest: Samples.editing(replacing: target, with: replacement), message)
        }

        init(_ rule: String, manifest: String, _ message: String) {
            self.rule = rule
            self.manifest = manifest
            self.message = "plan.json: " + message
        }

        var testDescription: String { rule }
    }

    private static let rootKeys = "format, name, table, legacyApplicationPattern, modernWriterWindow, steps, statements"
    private static let order = "(the order is expand, switch, backfill, contract, each at most once)"

    static let format: [Refusal] = [
        Refusal("a declarative plan where a plan of SQL files is read", replacing: #""format": 1"#, with: #""format": 2"#,
                "format: expected format 1 (a plan of SQL files) here; found format 2 (a declarative plan)"),
        Refusal("a newer format is refused for its format before its keys", replacing: #""format": 1,"#,
                with: #""format": 3, "colour": "blue","#,
                "format: expected format 1 or 2, the ones this version reads; "
                    + "found format 3, written for a newer version of Cutover"),
        Refusal("format 0", replacing: #""format": 1"#, with: #""format": 0"#,
                "format: expected format 1 or 2, the ones this version reads; found 0"),
        Refusal("format 1.0", replacing: #""format": 1"#, with: #""format": 1.0"#,
                "format: expected format 1 or 2, the ones this version reads; found 1.0"),
        Refusal("format as text", replacing: #""format": 1"#, with: #""format": "1""#,
                "format: expected a number; found a string"),
        Refusal("format missing", replacing: #""format": 1,"#, with: "",
                "format: expected a number; found no value (the key is required)"),
    ]

    static let keys: [Refusal] = [
        Refusal("an unknown top-level key", replacing: #""format": 1,"#, with: #""format": 1, "colour": "blue","#,
                "expected only the keys \(rootKeys); found unknown key \"colour\""),
        Refusal("several unknown keys", replacing: #""format": 1,"#,
                with: #""format": 1, "a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7,"#,
                "expected only the keys \(rootKeys); found unknown keys \"a\", \"b\", \"c\", \"d\", \"e\" and 2 more"),
        Refusal("an unknown key in a step", replacing: #"{"kind": "switch"}"#,
                with: #"{"kind": "switch", "apply": ["switch.sql"]}"#,
                #"steps[1]: expected only the keys kind, checks; found unknown key "apply""#),
        Refusal("revert on backfill", replacing: #""kind": "backfill","#,
                with: #""kind": "backfill", "revert": ["undo.sql"],"#,
                #"steps[2]: expected only the keys kind, batch, remaining, batchSize, niceRatio, maxReplicaLag, targetBatchTime, maxActiveSessions, throttleQuery, checks; found unknown key "revert""#),
        Refusal("no backfill step", replacing: #"{"kind": "backfill", "batch": "backfill_batch.sql", "remaining": "backfill_remaining.sql", "batchSize": 1000},"#,
                with: "", "steps: expected a backfill step; found none"),
        Refusal("an unknown key in a file object", replacing: #""transaction": false}"#,
                with: #""transaction": false, "timeout": 5}"#,
                #"steps[0].apply[1]: expected only the keys file, transaction, serverVersion; found unknown key "timeout""#),
        Refusal("an unknown key in a check", replacing: #""expect": "= 0","#, with: #""expect": "= 0", "severity": 1,"#,
                #"steps[3].checks[0]: expected only the keys name, sql, sqlFile, expect, message; "#
                    + #"found unknown key "severity""#),
        Refusal("a repeated top-level key", replacing: #""name": "drafts","#, with: #""name": "drafts", "name": "x","#,
                #"expected each key once; found "name" more than once"#),
        Refusal("a repeated key in a step", replacing: #"{"kind": "switch"}"#,
                with: #"{"kind": "switch", "kind": "switch"}"#,
                #"steps[1]: expected each key once; found "kind" more than once"#),
        Refusal("a repeated key in a check", replacing: #""expect": "= 1","#, with: #""expect": "= 1", "expect": "= 2","#,
                #"steps[0].checks[0]: expected each key once; found "expect" more than once"#),
    ]

    static let types: [Refusal] = [
        Refusal("a number for the name", replacing: #""name": "drafts""#, with: #""name": 7"#,
                "name: expected a string; found a number"),
        Refusal("null for the pattern", replacing: #""legacy-%""#, with: "null",
                "legacyApplicationPattern: expected a string; found null"),
        Refusal("an object for the steps", manifest: Samples.manifest(stepsValue: "{}"),
                "steps: expected an array; found an object"),
        Refusal("a string for a step", replacing: #"{"kind": "switch"}"#, with: #""switch""#,
                "steps[1]: expected an object; found a string"),
        Refusal("a number for a file", replacing: #"["expand_revert.sql"]"#, with: "[12]",
                "steps[0].revert[0]: expected a string or an object; found a number"),
        Refusal("text for transaction", replacing: #""transaction": false"#, with: #""transaction": "no""#,
                "steps[0].apply[1].transaction: expected a boolean; found a string"),
        Refusal("an object for the batch file", replacing: #""batch": "backfill_batch.sql""#,
                with: #""batch": {"file": "backfill_batch.sql"}"#,
                "steps[2].batch: expected a string; found an object"),
        Refusal("text for the batch size", replacing: #""batchSize": 1000"#, with: #""batchSize": "1000""#,
                "steps[2].batchSize: expected a number; found a string"),
        Refusal("a string for the checks", replacing: #"{"kind": "switch"}"#,
                with: #"{"kind": "switch", "checks": "none"}"#, "steps[1].checks: expected an array; found a string"),
        Refusal("an array for the checks' entries", replacing: #""checks": [{"name": "no v1-only rows""#,
                with: #""checks": [[], {"name": "no v1-only rows""#,
                "steps[3].checks[0]: expected an object; found an array"),
        Refusal("a boolean for the kind", replacing: #""kind": "switch""#, with: #""kind": true"#,
                "steps[1].kind: expected a string; found a boolean"),
    ]

    static let missing: [Refusal] = [
        Refusal("no name", replacing: #""name": "drafts","#, with: "",
                "name: expected a string; found no value (the key is required)"),
        Refusal("no table", replacing: #""table": "drafts","#, with: "",
                "table: expected a string; found no value (the key is required)"),
        Refusal("no window", replacing: #""modernWriterWindow": "10m","#, with: "",
                "modernWriterWindow: expected a string; found no value (the key is required)"),
        Refusal("no kind", replacing: #"{"kind": "switch"}"#, with: "{}",
                "steps[1].kind: expected a string; found no value (the key is required)"),
        Refusal("no revert on expand", replacing: #""revert": ["expand_revert.sql"],"#, with: "",
                "steps[0].revert: expected an array; found no value (the key is required)"),
        Refusal("no apply on contract", replacing: #""apply": ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"],"#,
                with: "", "steps[3].apply: expected an array; found no value (the key is required)"),
        Refusal("no batch on backfill", replacing: #""batch": "backfill_batch.sql", "#, with: "",
                "steps[2].batch: expected a string; found no value (the key is required)"),
        Refusal("no file in a file object", replacing: #"{"file": "expand_index.sql", "transaction": false}"#,
                with: #"{"transaction": false}"#,
                "steps[0].apply[1].file: expected a string; found no value (the key is required)"),
        Refusal("no expectation", replacing: #""expect": "= 0","#, with: "",
                "steps[3].checks[0].expect: expected a string; found no value (the key is required)"),
        Refusal("no message", replacing: #", "message": "the drafts table must exist""#, with: "",
                "steps[0].checks[0].message: expected a string; found no value (the key is required)"),
        Refusal("neither sql nor sqlFile", replacing: #""sqlFile": "checks/v1_only.sql", "#, with: "",
                "steps[3].checks[0]: expected exactly one of sql and sqlFile; found neither"),
        Refusal("both sql and sqlFile", replacing: #""sqlFile": "checks/v1_only.sql","#,
                with: #""sqlFile": "checks/v1_only.sql", "sql": "SELECT 0","#,
                "steps[3].checks[0]: expected exactly one of sql and sqlFile; found both"),
    ]

    static let steps: [Refusal] = [
        Refusal("an unknown step kind", replacing: #""kind": "backfill""#, with: #""kind": "migrate""#,
                #"steps[2].kind: expected one of expand, switch, backfill, contract; found "migrate""#),
        Refusal("a step kind in capitals", replacing: #""kind": "switch""#, with: #""kind": "Switch""#,
                #"steps[1].kind: expected one of expand, switch, backfill, contract; found "Switch""#),
        Refusal("no steps", manifest: Samples.manifest(steps: []),
                "steps: expected 1 to 64 entries; found 0"),
        Refusal("switch first", manifest: Samples.manifest(steps: [Samples.switchStep, Samples.contractStep]),
                #"steps[0].kind: expected expand as the first step; found "switch""#),
        Refusal("contract first", manifest: Samples.manifest(steps: [Samples.contractStep]),
                #"steps[0].kind: expected expand as the first step; found "contract""#),
        Refusal("expand twice", manifest: Samples.manifest(steps: [Samples.expandStep, Samples.expandStep]),
                #"steps[1].kind: expected switch, backfill or contract after expand \#(order); found "expand""#),
        Refusal("backfill before switch", manifest: Samples.manifest(steps: [
                    Samples.expandStep, Samples.backfillStep, Samples.switchStep, Samples.contractStep]),
                #"steps[2].kind: expected contract after backfill \#(order); found "switch""#),
        Refusal("switch twice", manifest: Samples.manifest(steps: [
                    Samples.expandStep, Samples.switchStep, Samples.switchStep, Samples.contractStep]),
                #"steps[2].kind: expected backfill or contract after switch \#(order); found "switch""#),
        Refusal("a step after contract", manifest: Samples.manifest(steps: [
                    Samples.expandStep, Samples.contractStep, Samples.switchStep]),
                #"steps[2].kind: expected no step after contract; found "switch""#),
        Refusal("no contract", manifest: Samples.manifest(steps: [
                    Samples.expandStep, Samples.switchStep, Samples.backfillStep]),
                "steps: expected a contract step; found none"),
        Refusal("too many steps", manifest: Samples.manifest(steps: Array(repeating: Samples.switchStep, count: 65)),
                "steps: expected 1 to 64 entries; found 65"),
    ]

    static let lengths: [Refusal] = [
        Refusal("an empty name", replacing: #""name": "drafts""#, with: #""name": """#,
                "name: expected 1 to 128 characters; found 0"),
        Refusal("a long name", replacing: #""name": "drafts""#, with: "\"name\": \"\(String(repeating: "n", count: 129))\"",
                "name: expected 1 to 128 characters; found 129"),
        Refusal("an empty table", replacing: #""table": "drafts""#, with: #""table": """#,
                "table: expected 1 to 63 bytes; found 0"),
        Refusal("a table name of three parts", replacing: #""table": "drafts""#, with: #""table": "db.public.drafts""#,
                #"table: expected one of name or schema.name, each part 1 to 63 bytes as the catalog spells it, or in double quotes as SQL writes it; found "db.public.drafts""#),
        Refusal("a table name past 63 bytes", replacing: #""table": "drafts""#,
                with: "\"table\": \"\(String(repeating: "\u{E9}", count: 32))\"",
                "table: expected 1 to 63 bytes; found 64"),
        Refusal("an empty pattern", replacing: #""legacy-%""#, with: #""""#,
                "legacyApplicationPattern: expected 1 to 256 characters; found 0"),
        Refusal("a long pattern", replacing: #""legacy-%""#, with: "\"\(String(repeating: "%", count: 257))\"",
                "legacyApplicationPattern: expected 1 to 256 characters; found 257"),
        Refusal("a long inline query", replacing: #""SELECT count(*) FROM pg_tables WHERE tablename = 'drafts'""#,
                with: "\"\(String(repeating: "S", count: 8_193))\"",
                "steps[0].checks[0].sql: expected 1 to 8192 characters; found 8193"),
        Refusal("an empty check name", replacing: #""name": "no v1-only rows""#, with: #""name": """#,
                "steps[3].checks[0].name: expected 1 to 128 characters; found 0"),
        Refusal("a long message", replacing: #""backfill must finish first""#,
                with: "\"\(String(repeating: "m", count: 1_025))\"",
                "steps[3].checks[0].message: expected 1 to 1024 characters; found 1025"),
        Refusal("a long expectation", replacing: #""expect": "= 0""#,
                with: "\"expect\": \"=\(String(repeating: " ", count: 255))0\"",
                "steps[3].checks[0].expect: expected 1 to 256 characters; found 257"),
        Refusal("a line break in the name", replacing: #""name": "drafts""#, with: #""name": "dr\nafts""#,
                "name: expected text without control characters; found U+000A"),
        Refusal("a NUL in the table", replacing: #""table": "drafts""#, with: #""table": "dr\u0000afts""#,
                "table: expected text without control characters; found U+0000"),
        Refusal("a control character in inline SQL", replacing: #""SELECT count(*)"#, with: #""SELECT\u0001 count(*)"#,
                "steps[0].checks[0].sql: expected text without control characters; found U+0001"),
        Refusal("a DEL in a message", replacing: #""backfill must finish first""#, with: #""backfill\u007f""#,
                "steps[3].checks[0].message: expected text without control characters; found U+007F"),
        Refusal("too many files", replacing: #"["expand_revert.sql"]"#,
                with: "[" + (0...64).map { "\"r\($0).sql\"" }.joined(separator: ", ") + "]",
                "steps[0].revert: expected 1 to 64 entries; found 65"),
        Refusal("no files", replacing: #"["expand_revert.sql"]"#, with: "[]",
                "steps[0].revert: expected 1 to 64 entries; found 0"),
        Refusal("too many checks", replacing: #"{"kind": "switch"}"#,
                with: #"{"kind": "switch", "checks": ["# + (0...64).map { index in
                    #"{"name": "c\#(index)", "sql": "SELECT 1", "expect": "= 1", "message": "m"}"#
                }.joined(separator: ", ") + "]}",
                "steps[1].checks: expected 0 to 64 entries; found 65"),
    ]

    static let numbers: [Refusal] = [
        Refusal("a batch size of 0", replacing: #""batchSize": 1000"#, with: #""batchSize": 0"#,
                "steps[2].batchSize: expected an integer from 1 to 1000000; found 0"),
        Refusal("a batch size past a million", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000001"#,
                "steps[2].batchSize: expected an integer from 1 to 1000000; found 1000001"),
        Refusal("a negative batch size", replacing: #""batchSize": 1000"#, with: #""batchSize": -5"#,
                "steps[2].batchSize: expected an integer from 1 to 1000000; found -5"),
        Refusal("a fractional batch size", replacing: #""batchSize": 1000"#, with: #""batchSize": 1.5"#,
                "steps[2].batchSize: expected an integer from 1 to 1000000; found 1.5"),
        Refusal("a batch size with an exponent", replacing: #""batchSize": 1000"#, with: #""batchSize": 1e3"#,
                "steps[2].batchSize: expected an integer from 1 to 1000000; found 1e3"),
        Refusal("a batch size past Int", replacing: #""batchSize": 1000"#,
                with: "\"batchSize\": \(String(repeating: "9", count: 300))",
                "steps[2].batchSize: expected an integer from 1 to 1000000; found "
                    + String(repeating: "9", count: 40) + "… (300 characters)"),
        Refusal("a target batch time past a minute", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "targetBatchTime": "2m""#,
                #"steps[2].targetBatchTime: expected a duration from 0s to 1m; found "2m""#),
        Refusal("no active session allowed", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "maxActiveSessions": 0"#,
                "steps[2].maxActiveSessions: expected an integer from 1 to 100000; found 0"),
        Refusal("an empty throttle query", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "throttleQuery": """#,
                "steps[2].throttleQuery: expected 1 to 8192 characters; found 0"),
        Refusal("a negative nice ratio", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "niceRatio": -0.1"#,
                "steps[2].niceRatio: expected a number from 0 to 100; found -0.1"),
        Refusal("a nice ratio past 100", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "niceRatio": 100.5"#,
                "steps[2].niceRatio: expected a number from 0 to 100; found 100.5"),
        Refusal("a nice ratio past Double", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "niceRatio": 1e400"#,
                "steps[2].niceRatio: expected a number from 0 to 100; found 1e400"),
        Refusal("a nice ratio as text", replacing: #""batchSize": 1000"#, with: #""batchSize": 1000, "niceRatio": "0.25""#,
                "steps[2].niceRatio: expected a number; found a string"),
        Refusal("a format past Int", replacing: #""format": 1"#, with: #""format": 99999999999999999999"#,
                "format: expected format 1 or 2, the ones this version reads; found 99999999999999999999"),
    ]

    static let durations: [Refusal] = ["", "10", "m", "10 minutes", "10min", "-1m", "+1m", "1.5h", "10M", "1w",
                                       "367d", "8785h", "1234567890s", " 10m", "١٠m"].map { text in
        Refusal("the window \(String(reflecting: text))", replacing: #""10m""#, with: "\"\(text)\"",
                "modernWriterWindow: expected a duration such as 30s, 10m, 2h or 7d, from 0s to 366d; "
                    + "found \"\(text)\"")
    }

    static let paths: [Refusal] = [
        Refusal("an absolute path", replacing: #""expand_revert.sql""#, with: #""/etc/revert.sql""#,
                #"steps[0].revert[0]: expected a path relative to the plan folder; found "/etc/revert.sql""#),
        Refusal("a parent component", replacing: #""expand_revert.sql""#, with: #""../revert.sql""#,
                #"steps[0].revert[0]: expected a path inside the plan folder, without ".."; found "../revert.sql""#),
        Refusal("a parent component inside", replacing: #""expand_revert.sql""#, with: #""sql/../../revert.sql""#,
                #"steps[0].revert[0]: expected a path inside the plan folder, without ".."; "#
                    + #"found "sql/../../revert.sql""#),
        Refusal("an empty component", replacing: #""expand_revert.sql""#, with: #""sql//revert.sql""#,
                #"steps[0].revert[0]: expected a path without empty or "." components; found "sql//revert.sql""#),
        Refusal("a current-folder component", replacing: #""expand_revert.sql""#, with: #""./revert.sql""#,
                #"steps[0].revert[0]: expected a path without empty or "." components; found "./revert.sql""#),
        Refusal("a backslash", replacing: #""expand_revert.sql""#, with: #""sql\\revert.sql""#,
                #"steps[0].revert[0]: expected / as the only separator; found a backslash in "sql\\revert.sql""#),
        Refusal("a Windows path", replacing: #""expand_revert.sql""#, with: #""C:\\plans\\revert.sql""#,
                #"steps[0].revert[0]: expected / as the only separator; found a backslash in "C:\\plans\\revert.sql""#),
        Refusal("a NUL", replacing: #""expand_revert.sql""#, with: #""revert.sql\u0000.sql""#,
                #"steps[0].revert[0]: expected only A-Z, a-z, 0-9, _, ., / and - in a path; "#
                    + #"found U+0000 in "revert.sql\u{0}.sql""#),
        Refusal("a space", replacing: #""expand_revert.sql""#, with: #""expand revert.sql""#,
                #"steps[0].revert[0]: expected only A-Z, a-z, 0-9, _, ., / and - in a path; "#
                    + #"found U+0020 in "expand revert.sql""#),
        Refusal("a non-ASCII letter", replacing: #""expand_revert.sql""#, with: #""r\u00e9vert.sql""#,
                #"steps[0].revert[0]: expected only A-Z, a-z, 0-9, _, ., / and - in a path; found U+00E9 in "révert.sql""#),
        Refusal("another extension", replacing: #""expand_revert.sql""#, with: #""expand_revert.txt""#,
                #"steps[0].revert[0]: expected a file name ending in .sql; found "expand_revert.txt""#),
        Refusal("a bare extension", replacing: #""expand_revert.sql""#, with: #""sql/.sql""#,
                #"steps[0].revert[0]: expected a file name ending in .sql; found "sql/.sql""#),
        Refusal("a folder", replacing: #""expand_revert.sql""#, with: #""sql/""#,
                #"steps[0].revert[0]: expected a path without empty or "." components; found "sql/""#),
        Refusal("an empty path", replacing: #""expand_revert.sql""#, with: #""""#,
                "steps[0].revert[0]: expected 1 to 255 characters; found 0"),
        Refusal("a long path", replacing: #""expand_revert.sql""#,
                with: "\"\(String(repeating: "a", count: 252)).sql\"",
                "steps[0].revert[0]: expected 1 to 255 characters; found 256"),
        Refusal("a bad path in a file object", replacing: #""expand_index.sql""#, with: #""../index.sql""#,
                #"steps[0].apply[1].file: expected a path inside the plan folder, without ".."; found "../index.sql""#),
        Refusal("a bad batch path", replacing: #""backfill_batch.sql""#, with: #""/tmp/batch.sql""#,
                #"steps[2].batch: expected a path relative to the plan folder; found "/tmp/batch.sql""#),
        Refusal("a bad check file", replacing: #""checks/v1_only.sql""#, with: #""checks/v1_only""#,
                #"steps[3].checks[0].sqlFile: expected a file name ending in .sql; found "checks/v1_only""#),
        Refusal("a file twice in one list", replacing: #""contract_validate.sql""#, with: #""contract_constraint.sql""#,
                #"steps[3].apply[1]: expected each file once in the list; found "contract_constraint.sql" again"#),
        Refusal("a file twice, once as an object", replacing: #"{"file": "expand_index.sql""#,
                with: #"{"file": "expand.sql""#,
                #"steps[0].apply[1]: expected each file once in the list; found "expand.sql" again"#),
    ]

    static let checks: [Refusal] = [
        Refusal("two checks with one name", replacing: #""message": "the drafts table must exist"}"#,
                with: #""message": "the drafts table must exist"}, "#
                    + #"{"name": "legacy table present", "sql": "SELECT 1", "expect": "= 1", "message": "m"}"#,
                #"steps[0].checks[1].name: expected a name no other check of the step has; "#
                    + #"found "legacy table present" again"#),
    ] + ["== 0", "=", "0", "< 'a'", ">= true", "= 'open", "= 'a' 'b'", "is nul", "is not", "= 0 0", "= NaN",
         "= \"x\"", "≤ 1"].map { text in
        Refusal("the expectation \(jsonString(text))", replacing: #""= 0""#, with: jsonString(text),
                "steps[3].checks[0].expect: expected a comparison such as = 0, <= 100, != 0, = true, = 'text' "
                    + "or is null; found \(jsonString(text))")
    }

    /// `text` as a JSON string; also how a refusal shows it, for text with no backslash or control character.
    private static func jsonString(_ text: String) -> String {
        "\"" + text.replacing("\"", with: #"\""#) + "\""
    }

    static let all = format + keys + types + missing + steps + lengths + numbers + durations + paths + checks

    @Test("each rule refuses with its exact line", arguments: all)
    func refusal(_ row: Refusal) {
        #expect(Samples.refusal(of: row.manifest) == row.message)
    }

    @Test("a schema-qualified table is read as written, each part within PostgreSQL's limit")
    func schemaQualifiedTable() throws {
        let manifest = Samples.editing(replacing: #""table": "drafts""#, with: #""table": "public.drafts""#)
        #expect(try MigrationPlan(manifest: Array(manifest.utf8)).table == "public.drafts")
        let long = Samples.editing(replacing: #""table": "drafts""#, with: "\"table\": \"public.\(String(repeating: "t", count: 64))\"")
        #expect(Samples.refusal(of: long).hasPrefix("plan.json: table: expected one of name or schema.name, each part 1 to 63 bytes"))
    }

    @Test("a manifest that is not an object is refused for the document as a whole")
    func documentNotAnObject() {
        #expect(Samples.refusal(of: "[]") == "plan.json: expected an object; found an array")
        #expect(Samples.refusal(of: " null ") == "plan.json: expected an object; found null")
        #expect(Samples.refusal(of: #""plan""#) == "plan.json: expected an object; found a string")
    }

    @Test("JSON syntax errors name the line and column, counted in characters")
    func syntaxErrors() {
        let trailingComma = Samples.editing(replacing: #""table": "drafts","#, with: #""table": "drafts",,"#)
        #expect(Samples.refusal(of: trailingComma)
            == "plan.json: expected JSON; found an unexpected character at line 4, column 21")
        let afterAccent = Samples.editing(replacing: #""name": "drafts","#, with: "\"name\": \"dr\u{E9}fts\" x")
        #expect(Samples.refusal(of: afterAccent)
            == "plan.json: expected JSON; found an unexpected character at line 3, column 20")
        #expect(Samples.refusal(of: Samples.full + "\n{}")
            == "plan.json: expected one JSON document; found more data at line 20, column 1")
        #expect(Samples.refusal(of: "{'format': 1}")
            == "plan.json: expected JSON; found an unexpected character at line 1, column 2")
    }

    @Test("every proper prefix of a manifest is refused as cut short")
    func truncatedManifests() {
        let bytes = Array(Samples.full.utf8)
        let misread = (0..<bytes.count).filter { length in
            Samples.refusal(of: Array(bytes[..<length]))
                != "plan.json: expected a complete JSON document; found its end cut short"
        }
        #expect(misread == [], "prefix lengths not refused as truncated")
    }

    @Test("bytes that are not UTF-8 are refused where they start")
    func invalidUTF8() {
        var bytes = Array(Samples.editing(replacing: #""name": "drafts""#, with: #""name": "dr?fts""#).utf8)
        bytes[bytes.firstIndex(of: UInt8(ascii: "?")) ?? 0] = 0xFF
        #expect(Samples.refusal(of: bytes)
            == "plan.json: expected UTF-8 text; found an invalid byte sequence at line 3, column 14")
        // An overlong encoding of "/" and an encoded surrogate, each at the start of the document.
        #expect(Samples.refusal(of: [0xC0, 0xAF])
            == "plan.json: expected UTF-8 text; found an invalid byte sequence at line 1, column 1")
        #expect(Samples.refusal(of: [0xED, 0xA0, 0x80])
            == "plan.json: expected UTF-8 text; found an invalid byte sequence at line 1, column 1")
    }

    @Test("deep nesting is refused without exhausting the stack")
    func deepNesting() {
        let deep = Samples.editing(replacing: #""legacy-%""#,
                                   with: String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
        #expect(Samples.refusal(of: deep) == "plan.json: expected at most 64 levels of nesting; found deeper nesting")
        let shallowEnough = Samples.editing(replacing: #""legacy-%""#,
                                            with: String(repeating: "[", count: 63) + String(repeating: "]", count: 63))
        #expect(Samples.refusal(of: shallowEnough)
            == "plan.json: legacyApplicationPattern: expected a string; found an array")
    }

    @Test("a manifest past 1 MiB is refused before it is parsed")
    func tooLarge() {
        let room = PlanLimits.maximumManifestByteCount - Samples.full.utf8.count
        let padded = Samples.full + String(repeating: " ", count: room)
        #expect(Samples.refusal(of: padded) == "accepted")
        #expect(Samples.refusal(of: padded + " ") == "plan.json: expected at most 1048576 bytes; found 1048577 bytes")
        // Not even read as JSON: the size alone refuses it.
        #expect(Samples.refusal(of: [UInt8](repeating: 0xFF, count: 2 << 20))
            == "plan.json: expected at most 1048576 bytes; found 2097152 bytes")
    }

    @Test("found values are cut short and escaped, so a refusal is one readable line")
    func foundValuesAreCutAndEscaped() {
        let long = Samples.editing(replacing: #""kind": "switch""#,
                                   with: "\"kind\": \"\(String(repeating: "x", count: 5_000))\"")
        #expect(Samples.refusal(of: long) == "plan.json: steps[1].kind: expected one of expand, switch, backfill, "
            + "contract; found \"\(String(repeating: "x", count: 40))\"… (5000 characters)")
        let hidden = Samples.editing(replacing: #""kind": "switch""#, with: #""kind": "a\u202Eb\nc\u0000\"\\""#)
        #expect(Samples.refusal(of: hidden) == "plan.json: steps[1].kind: expected one of expand, switch, backfill, "
            + #"contract; found "a\u{202E}b\u{A}c\u{0}\"\\""#)
        let unknownKey = Samples.editing(replacing: #""format": 1,"#, with: #""format": 1, "\u2028\r": 0,"#)
        #expect(Samples.refusal(of: unknownKey) == "plan.json: expected only the keys format, name, table, "
            + #"legacyApplicationPattern, modernWriterWindow, steps, statements; found unknown key "\u{2028}\u{D}""#)
        for manifest in [long, hidden, unknownKey] {
            #expect(!Samples.refusal(of: manifest).contains("\n"))
        }
    }

    @Test("the error names the file it was given and keeps its parts apart")
    func errorParts() throws {
        let manifest = Samples.editing(replacing: #""kind": "backfill""#, with: #""kind": "migrate""#)
        let error = try #require(Samples.read(manifest, file: "plans/drafts/plan.json").failure)
        #expect(error.file == "plans/drafts/plan.json")
        #expect(error.field == "steps[2].kind")
        #expect(error.problem == .unknownStepKind("migrate"))
        #expect(error.description == "plans/drafts/plan.json: steps[2].kind: expected one of expand, switch, "
            + #"backfill, contract; found "migrate""#)
    }
}
