import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// A declarative plan that is malformed is refused in one line with exit 64; one the server
/// would not accept is refused by expand's checks with exit 3; either way nothing is changed.
@Suite(.timeLimit(.minutes(3)))
struct DeclarativeRefusalTests {
    private static func manifest(_ operations: String, columns: String = "") -> String {
        """
        {"format": 2, "name": "orders", "table": "public.orders", "key": "id"\(columns),
         "operations": [\(operations)]}
        """
    }

    private static let valid = manifest("""
        {"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
          "up": "CASE status WHEN 'new' THEN 1 ELSE 2 END", "down": "CASE status_code WHEN 1 THEN 'new' ELSE 'paid' END"}}
        """)

    /// The table's shape: its columns, the triggers on it and the functions in `cutover`.
    private static let shape = """
        SELECT (SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
                 WHERE attrelid = 'public.orders'::regclass AND attnum > 0 AND NOT attisdropped)
            || ' triggers=' || (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.orders'::regclass AND NOT tgisinternal)
            || ' functions=' || (SELECT count(*) FROM pg_proc WHERE pronamespace = 'cutover'::regnamespace AND proname LIKE 'orders%')
        """

    /// A database with `orders`, tracked at baseline by the valid plan, and its folder.
    private func baseline(_ label: String) async throws -> (WorkflowDatabase, PlanFolder) {
        let db = try await WorkflowDatabase.make(label, rows: 1)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE customers (id bigint PRIMARY KEY);
                CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO orders VALUES (1, 'new'), (2, 'paid')
                """)
        }
        let folder = try PlanFolder.make(label, files: ["plan.json": Self.valid])
        let initialized = try await db.phase("--plan", folder.path, "init")
        #expect(initialized.status == 0, "\(initialized.diagnostics)")
        return (db, folder)
    }

    /// Runs expand with `plan.json` replaced by `manifest`; expects `status` and one line
    /// containing each of `lines`, and the table as it was.
    private func expectExpandRefused(_ label: String, _ manifest: String, status: Int32, naming lines: [String]) async throws {
        let (db, folder) = try await baseline(label)
        defer { folder.remove() }
        let before = try await db.value(String.self, Self.shape)
        try folder.write("plan.json", manifest)
        let run = try await db.phase("--plan", folder.path, "expand")
        #expect(run.status == status, "\(run.diagnostics)")
        for line in lines { #expect(run.diagnostics.contains(line), "\(run.diagnostics)") }
        if status == 64 { #expect(run.diagnostics.split(separator: "\n").count == 1, "\(run.diagnostics)") }
        #expect(try await db.value(String.self, Self.shape) == before)
        #expect(try await db.phaseName(plan: "orders") == "baseline")
    }

    @Test func anUnknownOperationIsAUsageError() async throws {
        try await expectExpandRefused("decl_unknown_op", Self.manifest(#"{"rename_colum": {"from": "status", "to": "state"}}"#),
                                      status: 64, naming: ["plan.json: operations[0].rename_colum: expected one of add_column"])
    }

    @Test func anUnknownKeyIsAUsageError() async throws {
        try await expectExpandRefused("decl_unknown_key", Self.manifest(#"{"add_column": {"name": "note", "type": "text", "nullable": true}}"#),
                                      status: 64, naming: ["operations[0].add_column", "nullable"])
    }

    @Test func anExpressionNamingAColumnThePlanDoesNotKnowIsAUsageError() async throws {
        try await expectExpandRefused("decl_unknown_column", Self.manifest(#"{"add_column": {"name": "note", "type": "text", "up": "upper(stauts)"}}"#),
                                      status: 64, naming: [#"operations[0].add_column.up: expected a column the plan knows here"#, #"found "stauts""#])
    }

    @Test func aNotNullColumnWithNothingToFillItIsAUsageError() async throws {
        try await expectExpandRefused("decl_no_fill", Self.manifest(#"{"add_column": {"name": "note", "type": "text", "notNull": true}}"#),
                                      status: 64, naming: ["contract could never complete"])
    }

    @Test func aDeclaredColumnMissingFromTheTableIsRefusedByTheChecks() async throws {
        try await expectExpandRefused("decl_missing_column",
                                      Self.manifest(#"{"add_column": {"name": "note", "type": "text", "up": "upper(customer)"}}"#,
                                                    columns: #", "columns": ["customer"]"#),
                                      status: 3, naming: ["check failed: columns present"])
    }

    @Test func anExpressionTheServerCannotCompileIsRefusedNamingIt() async throws {
        try await expectExpandRefused("decl_bad_expression", Self.manifest("""
            {"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
              "up": "CASE status WHEN 'new' THEN 'one' END", "down": "CASE status_code WHEN 1 THEN 'new' END"}},
            {"add_column": {"name": "note", "type": "txet"}},
            {"add_column": {"name": "customer_id", "type": "bigint", "references": {"table": "customers", "columns": ["idd"]}}}
            """), status: 3, naming: [
                "check failed: the plan's expressions compile",
                "the up expression of status_code: return type mismatch in function declared to return smallint",
                #"the type of note: type "txet" does not exist"#,
                "the foreign key orders_customer_id_fkey: the referenced columns of customers do not exist there with the same types",
            ])
    }

    /// A check that reads for longer than the check timeout fails saying so, and passes under
    /// a longer `--check-timeout`, on `check`, `status` and a step alike.
    @Test func aSlowCheckTimesOutAndALongerCheckTimeoutLetsItFinish() async throws {
        let (db, folder) = try await baseline("decl_check_timeout")
        defer { folder.remove() }
        try folder.write("plan.json", String(Self.valid.dropLast()) + """
            , "checks": {"expand": [{"name": "reads slowly", "sql": "SELECT count(*) FROM pg_sleep(2)", "expect": "= 1",
                                     "message": "m"}]}}
            """)
        let slow = "reads slowly: expected = 1, observed timed out after 1s (a longer check timeout, --check-timeout, lets it finish)"
        let checked = try await db.phase("--plan", folder.path, "check", "expand", "--check-timeout", "1s")
        #expect(checked.status == 3 && checked.output.contains("FAILED " + slow), "\(checked.output)\(checked.diagnostics)")
        let status = try await db.phase("--plan", folder.path, "status", "--check-timeout", "1s")
        #expect(status.status == 0 && status.output.contains("FAILED " + slow), "\(status.output)\(status.diagnostics)")
        let refused = try await db.phase("--plan", folder.path, "expand", "--skip-rehearsal", "--check-timeout", "1s")
        #expect(refused.status == 3 && refused.diagnostics.contains(slow), "\(refused.diagnostics)")
        let longer = try await db.phase("--plan", folder.path, "check", "expand", "--check-timeout", "20s")
        #expect(longer.output.contains("ok     reads slowly: expected = 1, observed 1"), "\(longer.output)\(longer.diagnostics)")
        let expanded = try await db.phase("--plan", folder.path, "expand", "--skip-rehearsal", "--check-timeout", "20s")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
    }

    /// `phase status` on a table whose count of rows still to convert runs past the check
    /// timeout still shows the rest, and says the rows were not counted. The plan's `up` takes
    /// 0.7 s a row, so counting the 2 rows takes longer than 1 s whatever the machine's load.
    @Test func statusShowsTheRestWhenTheCountRunsPastTheCheckTimeout() async throws {
        let (db, folder) = try await baseline("decl_status_uncounted")
        defer { folder.remove() }
        try folder.write("plan.json", Self.manifest("""
            {"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
              "up": "CASE WHEN pg_sleep(0.7) IS NULL AND status = 'new' THEN 1 ELSE 2 END",
              "down": "CASE status_code WHEN 1 THEN 'new' ELSE 'paid' END"}}
            """))
        let expanded = try await db.phase("--plan", folder.path, "expand", "--skip-rehearsal")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
        let status = try await db.phase("--plan", folder.path, "status", "--check-timeout", "1s")
        #expect(status.status == 0, "\(status.diagnostics)")
        let notCounted = "not counted within the check timeout of 1s (the count reads the table; a longer check timeout, --check-timeout, "
            + "lets it finish)"
        #expect(status.output.contains("backfill: 0 rows converted; the rows still to convert " + notCounted), "\(status.output)")
        #expect(status.output.contains("next: switch modern"), "\(status.output)")
        let json = try await db.phase("--plan", folder.path, "--format", "json", "status", "--check-timeout", "1s")
        #expect(json.output.contains("\"notCounted\": \"\(notCounted)\""), "\(json.output)")
        let counted = try await db.phase("--plan", folder.path, "status", "--check-timeout", "20s")
        #expect(counted.output.contains("backfill: 0 of 2 rows converted, 2 still to convert"), "\(counted.output)")

        // A lock on the table that outlasts the lock timeout: the count gives up waiting, and
        // the status says so rather than asking for a longer check timeout.
        let (database, url, path) = (db.database, db.url, folder.path)
        let locked = try await onThread {
            // The lock is held until this connection closes, when the closure returns.
            let holder = try database.connect()
            try holder.execute(unsafeSQL: "BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
            return try PhaseBinary.run(["--plan", path, "status", "--check-timeout", "20s"], databaseURL: url)
        }
        #expect(locked.status == 0, "\(locked.diagnostics)")
        #expect(locked.output.contains("backfill: 0 rows converted; the rows still to convert not counted: the count waited longer "
                                       + "than the lock timeout for its lock on the table"), "\(locked.output)")
    }

    /// The orders table with `rows` more, its plan's `up` sleeping `seconds` a row, expanded and
    /// switched to the modern writer: ready for a backfill.
    /// With `voidIsNull`, `up` gives NULL for a status of `void`: such a row is never converted,
    /// and every count of the rows still to convert calls `up` for it.
    private func modernWithSlowUp(_ label: String, seconds: String, rows: String,
                                  voidIsNull: Bool = false) async throws -> (WorkflowDatabase, PlanFolder) {
        let (db, folder) = try await baseline(label)
        let otherwise = voidIsNull ? "WHEN status <> 'void' THEN 2" : "ELSE 2"
        try folder.write("plan.json", Self.manifest("""
            {"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
              "up": "CASE WHEN pg_sleep(\(seconds)) IS NULL AND status = 'new' THEN 1 \(otherwise) END",
              "down": "CASE status_code WHEN 1 THEN 'new' ELSE 'paid' END"}}
            """))
        try await db.sql { try $0.execute(unsafeSQL: "INSERT INTO orders VALUES \(rows)") }
        for step in [["expand", "--skip-rehearsal"], ["switch", "modern", "--force-readers"]] {
            let run = try await db.phase(["--plan", folder.path] + step)
            #expect(run.status == 0, "\(step) \(run.diagnostics)")
        }
        return (db, folder)
    }

    /// A backfill whose count of rows still to convert runs past the check timeout begins
    /// without a total and counts on a session of its own meanwhile; the count, read in one
    /// snapshot with the rows converted, gives the whole total when it lands. The plan's `up`
    /// takes 0.7 s a row, so the 3 rows take 2.1 s to count, and the pass, 3 batches of one row
    /// each resting twice its time, 6.3 s.
    @Test func aBackfillWhoseCountRunsPastTheCheckTimeoutBeginsAtOnceAndCountsMeanwhile() async throws {
        let (db, folder) = try await modernWithSlowUp("decl_backfill_uncounted", seconds: "0.7", rows: "(3, 'new')")
        defer { folder.remove() }
        let backfill = try await db.phase("--plan", folder.path, "backfill", "--check-timeout", "1s", "--batch-size", "1", "--nice-ratio", "2")
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains("backfill: the rows still to convert were not counted within 1s (the count reads the table); "
                                              + "converting meanwhile, and counting on a session of its own"), "\(backfill.diagnostics)")
        // The count's snapshot saw the 3 rows as converted or still to convert, whatever batch had committed.
        #expect(backfill.diagnostics.contains(" rows were still to convert when counted (the count took "), "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains("backfill: 3/3 done"), "\(backfill.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM orders WHERE status_code IS NULL") == 0)
        #expect(try await db.value(Int64.self, "SELECT backfill_initial_remaining FROM cutover.migration_state WHERE plan = 'orders'") == 3)
    }

    /// Parallel workers do not wait for a count either: their ranges come from a sample of the
    /// table, and the count lands while they convert. Four rows at 0.7 s each take 2.8 s to
    /// count; two workers take a range each.
    @Test func parallelWorkersBeginBeforeTheCountLands() async throws {
        let (db, folder) = try await modernWithSlowUp("decl_backfill_uncounted_workers", seconds: "0.7", rows: "(3, 'new'), (4, 'new')")
        defer { folder.remove() }
        let backfill = try await db.phase("--plan", folder.path, "backfill", "--check-timeout", "1s", "--batch-size", "1",
                                          "--nice-ratio", "2", "--workers", "2")
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        let lines = backfill.diagnostics.split(separator: "\n").map(String.init)
        let notCounted = lines.firstIndex { $0.hasPrefix("backfill: the rows still to convert were not counted within 1s") }
        let workers = lines.firstIndex { $0 == "backfill: 2 workers over 2 key ranges" }
        #expect(notCounted != nil && workers != nil && notCounted! < workers!, "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains(" rows were still to convert when counted (the count took "), "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains("backfill: 4/4 done"), "\(backfill.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM orders WHERE status_code IS NULL") == 0)
        #expect(try await db.value(Int64.self, "SELECT backfill_initial_remaining FROM cutover.migration_state WHERE plan = 'orders'") == 4)
    }

    /// A pass that skipped no row held by another transaction has converted every row it
    /// walked; the count that confirms it runs under the check timeout, and past it the
    /// backfill ends without it, saying that contract counts. Three `void` rows, whose `up`
    /// gives NULL after 0.4 s, make every count take 1.2 s, past a check timeout of 1 s.
    @Test func aPassThatSkippedNothingEndsTheBackfillWhenTheCountRunsPastTheCheckTimeout() async throws {
        let (db, folder) = try await modernWithSlowUp("decl_backfill_uncounted_end", seconds: "0.4",
                                                      rows: "(3, 'new'), (4, 'void'), (5, 'void'), (6, 'void')", voidIsNull: true)
        defer { folder.remove() }
        let backfill = try await db.phase("--plan", folder.path, "backfill", "--check-timeout", "1s", "--batch-size", "10")
        #expect(backfill.status == 0, "\(backfill.diagnostics)")
        #expect(backfill.diagnostics.contains("backfill: pass 1 converted every row still to convert that it walked; the rows left were "
                                              + "not counted within 1s (the count reads the table), and contract counts them before it runs"),
                "\(backfill.diagnostics)")
        #expect(try await db.value(Int64.self, "SELECT count(*) FROM orders WHERE status_code IS NULL") == 3, "the void rows stay as they were")
        #expect(try await db.value(String.self, "SELECT phase FROM cutover.migration_state WHERE plan = 'orders'") == "backfilled")
        // Contract's own count runs under the check timeout: too short, it refuses; long enough, it finds none left.
        let short = try await db.phase("--plan", folder.path, "check", "contract", "--check-timeout", "1s")
        let refusal = short.output.split(separator: "\n").first { $0.contains("FAILED no v1-only rows") }
        #expect(short.status == 3 && refusal?.contains("timed out after 1s") == true, "\(short.output) \(short.diagnostics)")
        let long = try await db.phase("--plan", folder.path, "check", "contract", "--check-timeout", "20s")
        #expect(long.output.contains("ok     no v1-only rows: expected = 0, observed 0"), "\(long.output)")
    }

    @Test func theValidPlanPassesTheProbeAndExpands() async throws {
        let (db, folder) = try await baseline("decl_valid")
        defer { folder.remove() }
        let checked = try await db.phase("--plan", folder.path, "check", "expand")
        #expect(checked.status == 0, "\(checked.diagnostics)")
        #expect(checked.output.contains("ok     the plan's expressions compile: expected every one compiles, observed all"))
        let expanded = try await db.phase("--plan", folder.path, "expand")
        #expect(expanded.status == 0, "\(expanded.diagnostics)")
        #expect(try await db.value(String.self, Self.shape) == "id,status,status_code triggers=1 functions=7")
    }
}
