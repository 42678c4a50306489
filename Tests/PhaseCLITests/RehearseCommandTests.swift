import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// `phase rehearse` through the built binary against a real server: what it finds in plans that
/// would hurt, that the real table is only read, that its scratch database always goes, and the
/// gate it puts before expand and contract.
@Suite("phase rehearse", .timeLimit(.minutes(5)))
struct RehearseCommandTests {
    /// The gate applies: these tests are about it.
    private static let gated = ["CUTOVER_SKIP_REHEARSAL": ""]

    /// A database with `public.orders(id bigint primary key, status text not null, amount integer not null)`
    /// holding `rows` rows.
    private static func orders(_ label: String, rows: Int = 3000) async throws -> TestDatabase {
        let database = try await TestPostgres.database(label)
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: """
                CREATE TABLE public.orders (id bigint PRIMARY KEY, status text NOT NULL, amount integer NOT NULL);
                INSERT INTO public.orders SELECT n, (ARRAY['new', 'paid', 'shipped'])[1 + n % 3], n % 500 FROM generate_series(1, \(rows)) AS n;
                ANALYZE public.orders;
                """)
        }
        return database
    }

    /// A plan folder holding `plan.json` and the files given.
    private static func plan(_ manifest: String, files: [String: String] = [:]) throws -> String {
        let folder = TestScratch.url("rehearse-plan")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try manifest.write(to: folder.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return folder.path
    }

    private static let statusCode = #"""
        {"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint", "notNull": true},
          "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END",
          "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END"}}
        """#

    private static func run(_ arguments: [String], on database: TestDatabase, environment: [String: String] = gated) async throws -> PhaseBinary.Run {
        let url = database.connectionString
        return try await onThread { try PhaseBinary.run(arguments, databaseURL: url, environment: environment) }
    }

    private static func json(_ run: PhaseBinary.Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)\(run.diagnostics)")
    }

    private static func scratchDatabaseExists(_ name: String, on database: TestDatabase) async throws -> Bool {
        try await onThread {
            try database.connect().query("SELECT count(*) AS n FROM pg_database WHERE datname = \(name)")[0].decode(Int64.self, "n") == 1
        }
    }

    /// What the real table is: its rows, its columns, its triggers and its counters, for "untouched".
    private static func fingerprint(_ database: TestDatabase) async throws -> String {
        try await onThread {
            try database.connect().query("""
                SELECT (SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM public.orders o)
                    || (SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'public.orders'::regclass AND attnum > 0 AND NOT attisdropped)
                    || (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.orders'::regclass)::text
                    || (SELECT count(*) FROM pg_index WHERE indrelid = 'public.orders'::regclass)::text
                    || (SELECT n_tup_ins || '/' || n_tup_upd || '/' || n_tup_del FROM pg_stat_user_tables WHERE relid = 'public.orders'::regclass)
                    || (SELECT count(*) FROM pg_statistic WHERE starelid = 'public.orders'::regclass)::text AS print
                """)[0].decode(String.self, "print")
        }
    }

    @Test func aHandWrittenTriggerThatRaisesOnASameValueUpdateFailsTheRehearsalNamingTheStatementAndTheStep() async throws {
        let database = try await Self.orders("rehearse_trigger")
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-guarded", "table": "public.orders", "key": "id",
             "operations": [\(Self.statusCode), {"sql": {"expand": ["guard.sql"], "revert": ["guard_revert.sql"]}}]}
            """, files: [
                "guard.sql": """
                    CREATE FUNCTION public.orders_guard() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.status = OLD.status AND OLD.status_code IS NULL THEN
                            RAISE EXCEPTION 'order % keeps its status before it is converted', OLD.id;
                        END IF;
                        RETURN NEW;
                    END
                    $$;
                    CREATE TRIGGER orders_guard BEFORE UPDATE ON public.orders FOR EACH ROW EXECUTE FUNCTION public.orders_guard();
                    """,
                "guard_revert.sql": "DROP TRIGGER IF EXISTS orders_guard ON public.orders; DROP FUNCTION IF EXISTS public.orders_guard();",
            ])
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let before = try await Self.fingerprint(database)
        let text = try await Self.run(["--plan", folder, "rehearse"], on: database)
        #expect(text.status == 3, "\(text.output)\(text.diagnostics)")
        #expect(text.output.contains("FAILURE (after expand): the old application's same-value update of status worked before expand and fails after expand: order 1 keeps its status before it is converted"),
                "\(text.output)")
        #expect(text.output.contains("    in: UPDATE public.orders SET status = status WHERE id = '1'"), "\(text.output)")
        #expect(text.output.contains("verdict: FAILED"), "\(text.output)")

        let json = try Self.json(try await Self.run(["--plan", folder, "--format", "json", "rehearse"], on: database))
        #expect(json["verdict"] as? String == "failed")
        let scratch = try #require(json["scratchDatabase"] as? String)
        #expect(try await !Self.scratchDatabaseExists(scratch, on: database), "a failed rehearsal drops its scratch database")
        #expect(try await Self.fingerprint(database) == before, "the real table is untouched")
        // The gate refuses expand, naming the failed rehearsal.
        let expand = try await Self.run(["--plan", folder, "expand"], on: database)
        #expect(expand.status == 3)
        #expect(expand.diagnostics.contains("check failed: rehearsal passed"), "\(expand.diagnostics)")
        #expect(expand.diagnostics.contains("none passed; the last, rehearsal "), "\(expand.diagnostics)")
        #expect(try await Self.fingerprint(database) == before)
    }

    @Test func aRewriteAnIndexWithoutConcurrentlyAndAConstraintWithoutNotValidAreReportedWithTheLocksObserved() async throws {
        let database = try await Self.orders("rehearse_risky")
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-risky", "table": "public.orders", "key": "id",
             "operations": [{"sql": {"expand": ["rewrite.sql", "index.sql", "constraint.sql"], "revert": ["risky_revert.sql"]}}]}
            """, files: [
                // Each file runs in a transaction of its own, so each statement takes its own lock.
                "rewrite.sql": "ALTER TABLE public.orders ALTER COLUMN amount TYPE bigint;",
                "index.sql": "CREATE INDEX orders_status ON public.orders (status);",
                "constraint.sql": "ALTER TABLE public.orders ADD CONSTRAINT orders_amount_positive CHECK (amount >= 0);",
                "risky_revert.sql": """
                    ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS orders_amount_positive;
                    DROP INDEX IF EXISTS public.orders_status;
                    ALTER TABLE public.orders ALTER COLUMN amount TYPE integer;
                    """,
            ])
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let run = try await Self.run(["--plan", folder, "--format", "json", "rehearse"], on: database)
        let json = try Self.json(run)
        let statements = try #require(json["statements"] as? [[String: Any]])
        func observed(_ prefix: String) throws -> [String: Any] {
            try #require(statements.first { $0["step"] as? String == "expand" && ($0["sql"] as? String ?? "").hasPrefix(prefix) }, "\(prefix)")
        }
        let rewrite = try observed("ALTER TABLE public.orders ALTER COLUMN amount TYPE bigint")
        #expect(rewrite["tableLock"] as? String == "ACCESS EXCLUSIVE")
        #expect((rewrite["rewritten"] as? [String])?.contains("public.orders") == true, "\(rewrite)")
        let index = try observed("CREATE INDEX orders_status")
        #expect(index["tableLock"] as? String == "SHARE", "\(index)")
        #expect(index["indexesBuilt"] as? [String] == ["public.orders_status"], "\(index)")
        let constraint = try observed("ALTER TABLE public.orders ADD CONSTRAINT orders_amount_positive")
        #expect(constraint["tableLock"] as? String == "ACCESS EXCLUSIVE", "\(constraint)")
        #expect(constraint["constraintsValidated"] as? [String] == ["orders_amount_positive"], "\(constraint)")
        let messages = (json["findings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.hasPrefix("index public.orders_status built without CONCURRENTLY on a table of 3,000 rows") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("constraint orders_amount_positive added without NOT VALID: every row is read under ACCESS EXCLUSIVE") },
                "\(messages)")
        // The revert's own statements are observed too.
        let revert = try #require(statements.first { $0["step"] as? String == "revert expand" && ($0["sql"] as? String ?? "").hasPrefix("ALTER TABLE public.orders ALTER COLUMN amount TYPE integer") })
        #expect((revert["rewritten"] as? [String])?.contains("public.orders") == true, "\(revert)")
        #expect(statements.first { $0["step"] as? String == "revert expand" }?["tableLock"] as? String == "ACCESS EXCLUSIVE",
                "the revert's first statement takes ACCESS EXCLUSIVE, held by the rest of its transaction")
        #expect(messages.contains { $0.hasPrefix("rewrites public.orders, public.orders_pkey: an estimated ") }, "\(messages)")
        #expect(json["verdict"] as? String == "passed", "on 3,000 rows every lock is held briefly: \(messages)")
        let scratch = try #require(json["scratchDatabase"] as? String)
        #expect(try await !Self.scratchDatabaseExists(scratch, on: database), "a rehearsal that passes drops its scratch database too")
    }

    @Test func aStrongLockHeldLongerThanTheLockTimeoutOnTheRealTableFailsTheRehearsal() async throws {
        let database = try await Self.orders("rehearse_long_lock", rows: 200_000)
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-rewrite", "table": "public.orders", "key": "id",
             "operations": [{"sql": {"expand": ["rewrite.sql"], "revert": ["rewrite_revert.sql"]}}]}
            """, files: [
                "rewrite.sql": "ALTER TABLE public.orders ALTER COLUMN amount TYPE bigint;",
                "rewrite_revert.sql": "ALTER TABLE public.orders ALTER COLUMN amount TYPE integer;",
            ])
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        // 2,000 of 200,000 rows: the rewrite's time on the sample is scaled a hundredfold.
        // The sample is read under the lock timeout too: 100ms leaves it room on a loaded machine.
        let run = try await Self.run(["--plan", folder, "rehearse", "--sample-rows", "2000", "--lock-timeout", "100ms"], on: database)
        #expect(run.status == 3, "\(run.output)\(run.diagnostics)")
        #expect(run.output.contains("FAILURE (expand): ACCESS EXCLUSIVE on public.orders for an estimated "), "\(run.output)")
        #expect(run.output.contains("longer than the lock timeout of 100ms: the table will be unavailable: reads and writes wait"), "\(run.output)")
        #expect(run.output.contains("2,000 of about 200,000 rows"), "\(run.output)")
    }

    @Test func aKilledRehearsalsScratchDatabaseIsDroppedByTheNextPhaseCommand() async throws {
        let database = try await Self.orders("rehearse_killed", rows: 60_000)
        let url = database.connectionString
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-killed", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let before = try await Self.fingerprint(database)
        let started = try await onThread {
            // 60,000 rows are read under the lock timeout: 5s leaves them room on a loaded machine.
            try PhaseBinary.start(["--plan", folder, "rehearse", "--sample-rows", "60000", "--lock-timeout", "5s"], databaseURL: url,
                                  environment: Self.gated)
        }
        // Wait for the rehearsal to make its scratch database, then kill it outright.
        var scratch: String?
        let deadline = ContinuousClock.now + .seconds(60)
        while scratch == nil, ContinuousClock.now < deadline {
            scratch = try await onThread {
                try database.connect().query("""
                    SELECT r.scratch_database FROM cutover.rehearsals r JOIN pg_database d ON d.datname = r.scratch_database
                     WHERE r.plan = 'orders-killed' AND r.finished_at IS NULL
                    """).first?.decode(String.self, "scratch_database")
            }
            if scratch == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let name = try #require(scratch, "the rehearsal never made its scratch database")
        kill(started.pid, SIGKILL)
        _ = try await onThread { try PhaseBinary.finish(started) }
        #expect(try await Self.scratchDatabaseExists(name, on: database), "SIGKILL leaves the scratch database")
        // The killed rehearsal's server session ends when the server sees its client gone, at
        // once when it waits for the client, only when its statement ends when it runs one; until
        // then the rehearsal is not known to be killed, and nothing drops what it uses.
        let gone = ContinuousClock.now + .seconds(60)
        while try await onThread({
            try database.connect().query("""
                SELECT EXISTS (SELECT 1 FROM cutover.rehearsals r JOIN pg_stat_activity a ON a.pid = r.pid AND a.backend_start = r.backend_start
                                WHERE r.scratch_database = \(name)) AS alive
                """)[0].decode(Bool.self, "alive")
        }), ContinuousClock.now < gone {
            try await Task.sleep(for: .milliseconds(20))
        }

        let status = try await Self.run(["--plan", folder, "status"], on: database)
        #expect(status.status == 0, "\(status.diagnostics)")
        #expect(status.diagnostics.contains("dropped scratch database \(name), left by a rehearsal that was killed"), "\(status.diagnostics)")
        #expect(status.output.contains("interrupted, checksum "), "\(status.output)")
        #expect(try await !Self.scratchDatabaseExists(name, on: database))
        #expect(try await Self.fingerprint(database) == before, "the real table is untouched")
    }

    @Test func aTableLockedByAnotherSessionMakesTheRehearsalGiveUpWithinTheLockTimeout() async throws {
        let database = try await Self.orders("rehearse_blocked")
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-blocked", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let holder = try await onThread { () -> HeldSession in
            let connection = try database.connect(applicationName: "ddl-elsewhere")
            try connection.execute(unsafeSQL: "BEGIN; LOCK TABLE public.orders IN ACCESS EXCLUSIVE MODE")
            return HeldSession(connection)
        }
        let run = try await Self.run(["--plan", folder, "rehearse", "--lock-timeout", "200ms"], on: database)
        #expect(run.status == 1, "\(run.output)\(run.diagnostics)")
        #expect(run.diagnostics.contains("lock timeout"), "\(run.diagnostics)")
        holder.close()
        let left = try await onThread {
            try database.connect().query("SELECT count(*) AS n FROM cutover.rehearsals WHERE plan = 'orders-blocked'")[0].decode(Int64.self, "n")
        }
        #expect(left == 0, "nothing was recorded, and no scratch database made, before the sample was read")
    }

    @Test(arguments: ExampleWorkload.all)
    func everyExamplePlanRehearsesCleanAndThenPassesTheGate(_ workload: ExampleWorkload) async throws {
        let example = try await ExampleDatabase.make(workload)
        let database = example.database
        #expect(try await Self.run(["--plan", workload.path, "init"], on: database).status == 0)
        let refused = try await Self.run(["--plan", workload.path, "expand"], on: database)
        #expect(refused.status == 3, "\(workload.folder): \(refused.diagnostics)")
        #expect(refused.diagnostics.contains("observed none: the plan was never rehearsed on this database"), "\(refused.diagnostics)")
        let rehearsal = try await Self.run(["--plan", workload.path, "rehearse"], on: database)
        #expect(rehearsal.status == 0, "\(workload.folder): \(rehearsal.output)\(rehearsal.diagnostics)")
        #expect(rehearsal.output.contains("verdict: passed"), "\(workload.folder): \(rehearsal.output)")
        #expect(!rehearsal.output.contains("FAILURE"), "\(workload.folder): \(rehearsal.output)")
        let expand = try await Self.run(["--plan", workload.path, "expand"], on: database)
        #expect(expand.status == 0, "\(workload.folder): \(expand.diagnostics)")
        let history = try await Self.run(["--plan", workload.path, "--format", "json", "history"], on: database)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.output.utf8)) as? [[String: Any]], "\(history.output)")
        let done = try #require(entries.first { $0["step"] as? String == "expand" && $0["outcome"] as? String == "done" }, "\(entries)")
        let recorded = try #require(done["rehearsal"] as? String, "\(done)")
        #expect(recorded.hasPrefix("rehearsal ") && recorded.contains(" passed, started "), "\(recorded)")
    }

    @Test func skippingTheRehearsalIsRecordedAndAChangedPlanNeedsANewOne() async throws {
        let database = try await Self.orders("rehearse_gate")
        let manifest = """
            {"format": 2, "name": "orders-gate", "table": "public.orders", "key": "id", "modernWriterWindow": "WINDOW", "operations": [\(Self.statusCode)]}
            """
        let first = try Self.plan(manifest.replacing("WINDOW", with: "10m"))
        let changed = try Self.plan(manifest.replacing("WINDOW", with: "20m"))
        #expect(try await Self.run(["--plan", first, "init"], on: database).status == 0)
        #expect(try await Self.run(["--plan", first, "rehearse"], on: database).status == 0)
        let check = try await Self.run(["--plan", changed, "check", "expand"], on: database)
        #expect(check.status == 3)
        #expect(check.output.contains("rehearsed checksum"), "\(check.output)")
        #expect(check.output.contains("the plan changed since"), "\(check.output)")
        let skipped = try await Self.run(["--plan", changed, "expand", "--skip-rehearsal"], on: database)
        #expect(skipped.status == 0, "\(skipped.diagnostics)")
        let history = try await Self.run(["--plan", changed, "--format", "json", "history"], on: database)
        #expect(history.output.contains("skipped by the operator (--skip-rehearsal)"), "\(history.output)")
        // A rehearsal runs before expand only.
        let late = try await Self.run(["--plan", changed, "rehearse"], on: database)
        #expect(late.status == 1)
        #expect(late.diagnostics.contains("plan orders-gate is at phase expanded: a rehearsal copies the table as expand finds it, so it runs before expand only"),
                "\(late.diagnostics)")
    }

    /// Every step and rollback the rehearsal runs, as the report names them.
    private static let allSteps = [
        "expand", "revert expand", "expand (2)", "switch modern", "switch legacy", "switch modern (2)", "backfill", "switch legacy (2)",
        "switch modern (3)", "backfill (2)", "switch legacy (3)", "revert expand (2)", "expand (3)", "switch modern (4)", "backfill (3)", "contract",
    ]

    @Test func theRollbackOfExpandAfterABackfillIsRehearsedAndARevertThatLosesConvertedRowsFailsIt() async throws {
        let database = try await Self.orders("rehearse_late_revert")
        let manifest = """
            {"format": 2, "name": "orders-late-revert", "table": "public.orders", "key": "id",
             "operations": [\(Self.statusCode), {"sql": {"expand": ["codes.sql"], "revert": ["codes_revert.sql"]}}]}
            """
        let codes = "ALTER TABLE public.orders ADD CONSTRAINT orders_status_code_known CHECK (status_code BETWEEN 1 AND 4) NOT VALID;"
        let dropCodes = "ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS orders_status_code_known;"
        // Meant to remove, before the old application reads the table again, the rows only the
        // new one can represent (4, cancelled); it forgets 3. Before a backfill no row has a
        // status code, so only a rollback of expand after one shows it.
        let lossy = try Self.plan(manifest, files: [
            "codes.sql": codes,
            "codes_revert.sql": "DELETE FROM public.orders WHERE status_code IS NOT NULL AND status_code NOT IN (1, 2);\n" + dropCodes,
        ])
        #expect(try await Self.run(["--plan", lossy, "init"], on: database).status == 0)
        let before = try await Self.fingerprint(database)
        let text = try await Self.run(["--plan", lossy, "rehearse"], on: database)
        #expect(text.status == 3, "\(text.output)\(text.diagnostics)")
        #expect(text.output.contains("steps: " + Self.allSteps.joined(separator: ", ")), "\(text.output)")
        #expect(text.output.contains("FAILURE (revert expand (2)): the rollback loses rows: the copy held 3,000 rows before it and 2,000 after; "
                                     + "a rollback must keep every row written before it"), "\(text.output)")
        #expect(!text.output.contains("FAILURE (revert expand):"), "the first rollback of expand, before any backfill, loses nothing: \(text.output)")
        #expect(text.output.contains("revert expand (2):\n  codes_revert.sql (in a transaction)"), "\(text.output)")
        #expect(try await Self.fingerprint(database) == before, "the real table is untouched")

        // Without the DELETE, the same sequence passes, and the JSON lists every step and the replays after each.
        let kept = try Self.plan(manifest, files: ["codes.sql": codes, "codes_revert.sql": dropCodes])
        let run = try await Self.run(["--plan", kept, "--format", "json", "rehearse"], on: database)
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
        let json = try Self.json(run)
        #expect(json["steps"] as? [String] == Self.allSteps)
        let statements = try #require(json["statements"] as? [[String: Any]])
        #expect(statements.contains { $0["step"] as? String == "revert expand (2)" && ($0["sql"] as? String ?? "").hasPrefix("ALTER TABLE public.orders DROP CONSTRAINT") },
                "\(statements.map { $0["step"] as? String ?? "" })")
        let replayed = try #require(json["replayed"] as? [[String: Any]])
        let stages = (replayed.first?["outcomes"] as? [[String: Any]] ?? []).compactMap { $0["stage"] as? String }
        #expect(stages == ["before expand"] + Self.allSteps.dropLast().map { "after \($0)" }, "\(stages)")
    }

    @Test func theWALOfEachStatementSaysWhetherItIsTheStatementsOwnOrTheServersWhileItRan() async throws {
        let database = try await Self.orders("rehearse_wal")
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-wal", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let major = try await onThread {
            try database.connect().query("SELECT current_setting('server_version_num')::int / 10000 AS major")[0].decode(Int.self, "major")
        }
        // PostgreSQL 18 counts each session's WAL, brought up to date between transactions: a
        // statement outside one (the backfill here) is measured by its own; the rest, and every
        // statement before 18, by the server's, and marked so.
        let countsSessions = major >= 18
        let run = try await Self.run(["--plan", folder, "--format", "json", "rehearse"], on: database)
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
        let statements = try #require(try Self.json(run)["statements"] as? [[String: Any]])
        #expect(statements.contains { $0["inTransaction"] as? Bool == true })
        let backfill = try #require(statements.first { $0["step"] as? String == "backfill" }, "\(statements)")
        #expect(backfill["inTransaction"] as? Bool == false)
        #expect((backfill["walBytes"] as? Int ?? 0) > 0, "converting 3,000 rows writes WAL: \(backfill)")
        for statement in statements {
            let expected = countsSessions && statement["inTransaction"] as? Bool == false ? "session" : "server-wide"
            #expect(statement["walScope"] as? String == expected, "PostgreSQL \(major): \(statement)")
        }

        let text = try await Self.run(["--plan", folder, "rehearse"], on: database)
        let lines = text.output.split(separator: "\n").map(String.init)
        let alter = try #require(lines.firstIndex { $0.hasPrefix("    ALTER TABLE ") && $0.contains(" ADD COLUMN ") }, "\(text.output)")
        #expect(lines[alter + 1].contains("; server-wide WAL during the statement "), "\(lines[alter + 1])")
        let converted = try #require(lines.firstIndex { $0.hasPrefix("    backfill (") }, "\(text.output)")
        #expect(lines[converted + 1].contains(countsSessions ? "; its own WAL " : "; server-wide WAL during the statement "),
                "PostgreSQL \(major): \(lines[converted + 1])")
    }

    @Test func aSampleNotReadWithinTheLockTimeoutStopsTheRehearsalSoThatItHoldsTheRealTableNoLonger() async throws {
        let database = try await Self.orders("rehearse_slow_sample", rows: 200_000)
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-slow-sample", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        // 200,000 rows are not read as text in 10ms: the sample's statement is stopped there,
        // as a DDL of the application would otherwise wait behind its ACCESS SHARE lock.
        let run = try await Self.run(["--plan", folder, "rehearse", "--sample-rows", "200000", "--lock-timeout", "10ms"], on: database)
        #expect(run.status == 1, "\(run.output)\(run.diagnostics)")
        #expect(run.diagnostics.contains("could not read the sample of public.orders within the lock timeout of 10ms in 5 attempts"),
                "\(run.diagnostics)")
        // Each attempt but the last is followed by a retry after a backoff, as a step's DDL is.
        #expect(run.diagnostics.contains("could not read the sample within the lock timeout; retry 4 in "), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("; retry 5 in "), "\(run.diagnostics)")
        #expect(run.diagnostics.contains("a rehearsal holds no lock on the real table longer than that"), "\(run.diagnostics)")
        let recorded = try await onThread {
            try database.connect().query("SELECT count(*) AS n FROM cutover.rehearsals WHERE plan = 'orders-slow-sample'")[0].decode(Int64.self, "n")
        }
        #expect(recorded == 0, "nothing was recorded, and no scratch database made, before the sample was read")
    }

    @Test func theApplicationsWritesGoOnWhileARehearsalRunsAndItLeavesNoLockOnTheRealTable() async throws {
        let database = try await Self.orders("rehearse_live")
        let url = database.connectionString
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-live", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        // Locks on the real table held by any client session but the one asking, each named by
        // its session. Not the server's own workers: autovacuum may vacuum the newly filled table
        // at any moment, and what is asserted is what the rehearsal holds.
        let locksOnTable = {
            try await onThread {
                try database.connect().query("""
                    SELECT a.application_name || ' ' || l.mode || ': ' || a.query AS holder FROM pg_locks l
                      JOIN pg_stat_activity a ON a.pid = l.pid AND a.backend_type = 'client backend'
                     WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                       AND l.relation = 'public.orders'::regclass AND l.pid <> pg_backend_pid()
                    """).map { try $0.decode(String.self, "holder") }
            }
        }
        let started = try await onThread {
            try PhaseBinary.start(["--plan", folder, "rehearse"], databaseURL: url, environment: Self.gated)
        }
        // Wait until the rehearsal works on its copy: a session of it is in the scratch database.
        var scratch: String?
        let deadline = ContinuousClock.now + .seconds(60)
        while scratch == nil, ContinuousClock.now < deadline {
            scratch = try await onThread {
                try database.connect().query("""
                    SELECT r.scratch_database FROM cutover.rehearsals r JOIN pg_stat_activity a ON a.datname = r.scratch_database
                     WHERE r.plan = 'orders-live' AND r.finished_at IS NULL LIMIT 1
                    """).first?.decode(String.self, "scratch_database")
            }
            if scratch == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let copy = try #require(scratch, "the rehearsal was never seen working on its copy")
        // The application's writes on the real table, each bounded so that a wait fails the test instead of hanging it.
        let written = try await onThread {
            let application = try database.connect(applicationName: "orders-application")
            try application.execute(unsafeSQL: "SET statement_timeout = '10s'")
            try application.query("UPDATE public.orders SET status = 'paid' WHERE id = \(Int64(1))")
            try application.query("INSERT INTO public.orders VALUES (\(Int64(900_001)), 'new', \(Int64(7)))")
            return try application.query("SELECT count(*) AS n FROM public.orders WHERE (id = 1 AND status = 'paid') OR id = 900001")[0]
                .decode(Int64.self, "n")
        }
        #expect(written == 2)
        let duringCopy = try await locksOnTable()
        #expect(duringCopy.isEmpty, "while the rehearsal works on \(copy), it holds no lock on the real table: \(duringCopy)")
        let finished = try await onThread { try PhaseBinary.finish(started) }
        #expect(finished.status == 0, "\(finished.output)\(finished.diagnostics)")
        #expect(try await !Self.scratchDatabaseExists(copy, on: database))
        let after = try await locksOnTable()
        #expect(after.isEmpty, "after the rehearsal, no lock of it is left on the real table: \(after)")
    }

    @Test func contractIsRefusedByTheGateUntilARehearsalOfItsChecksumPassed() async throws {
        let database = try await Self.orders("rehearse_contract_gate")
        let manifest = """
            {"format": 2, "name": "orders-contract-gate", "table": "public.orders", "key": "id", "modernWriterWindow": "WINDOW", "operations": [\(Self.statusCode)]}
            """
        let rehearsed = try Self.plan(manifest.replacing("WINDOW", with: "10m"))
        let changed = try Self.plan(manifest.replacing("WINDOW", with: "20m"))
        #expect(try await Self.run(["--plan", rehearsed, "init"], on: database).status == 0)
        #expect(try await Self.run(["--plan", rehearsed, "rehearse"], on: database).status == 0)
        func forward(expand: [String]) async throws {
            for arguments in [expand, ["switch", "modern", "--force-readers"], ["backfill"]] {
                let step = try await Self.run(["--plan", changed] + arguments, on: database)
                #expect(step.status == 0, "\(arguments): \(step.diagnostics)")
            }
        }
        // The plan changed after its rehearsal: expand goes on only because the operator skips the gate.
        try await forward(expand: ["expand", "--skip-rehearsal"])
        let refused = try await Self.run(["--plan", changed, "contract", "--yes", "--window", "0s"], on: database)
        #expect(refused.status == 3, "\(refused.output)\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("check failed: rehearsal passed"), "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("rehearsed checksum"), "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("the plan changed since"), "\(refused.diagnostics)")
        let phase = try await onThread {
            try database.connect().query("SELECT phase FROM cutover.migration_state WHERE plan = 'orders-contract-gate'")[0].decode(String.self, "phase")
        }
        #expect(phase == "backfilled", "a refused contract changes nothing")

        // Back to baseline, where the changed plan is rehearsed; the gate then lets expand and contract through.
        for arguments in [["rollback", "switch"], ["rollback", "expand"], ["rehearse"]] {
            let step = try await Self.run(["--plan", changed] + arguments, on: database)
            #expect(step.status == 0, "\(arguments): \(step.output)\(step.diagnostics)")
        }
        try await forward(expand: ["expand"])
        let contract = try await Self.run(["--plan", changed, "contract", "--yes", "--window", "0s"], on: database)
        #expect(!contract.diagnostics.contains("check failed: rehearsal passed"), "\(contract.diagnostics)")
        #expect(contract.status == 0, "\(contract.output)\(contract.diagnostics)")
        let history = try await Self.run(["--plan", changed, "--format", "json", "history"], on: database)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.output.utf8)) as? [[String: Any]], "\(history.output)")
        let contracted = try #require(entries.first { $0["step"] as? String == "contract" && $0["outcome"] as? String == "done" }, "\(entries)")
        let recorded = try #require(contracted["rehearsal"] as? String, "\(contracted)")
        #expect(recorded.hasPrefix("rehearsal ") && recorded.contains(" passed, started "), "\(recorded)")
    }

    @Test func theDeclaredStatementsAreReplayedAndATriggerThatMakesTheRepresentationsDisagreeFailsTheRehearsal() async throws {
        let database = try await Self.orders("rehearse_declared")
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-declared", "table": "public.orders", "key": "id",
             "operations": [\(Self.statusCode), {"sql": {"expand": ["reset.sql"], "revert": ["reset_revert.sql"]}}],
             "statements": [
               {"name": "mark paid", "application": "legacy", "sql": "UPDATE public.orders SET status = 'paid' WHERE id = 5"},
               {"name": "ship by code", "application": "modern", "sql": "UPDATE public.orders SET status_code = 3 WHERE id = 6"}]}
            """, files: [
                // Runs after the sync trigger (names order triggers) and undoes a legacy write of status.
                "reset.sql": """
                    CREATE FUNCTION public.orders_reset() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.status IS DISTINCT FROM OLD.status THEN NEW.status := OLD.status; END IF;
                        RETURN NEW;
                    END
                    $$;
                    CREATE TRIGGER orders_reset BEFORE UPDATE OF status ON public.orders FOR EACH ROW EXECUTE FUNCTION public.orders_reset();
                    """,
                "reset_revert.sql": "DROP TRIGGER IF EXISTS orders_reset ON public.orders; DROP FUNCTION IF EXISTS public.orders_reset();",
            ])
        #expect(try await Self.run(["--plan", folder, "init"], on: database).status == 0)
        let run = try await Self.run(["--plan", folder, "--format", "json", "rehearse"], on: database)
        #expect(run.status == 3, "\(run.output)\(run.diagnostics)")
        let json = try Self.json(run)
        let replayed = try #require(json["replayed"] as? [[String: Any]])
        #expect(replayed.map { $0["name"] as? String } == ["mark paid", "ship by code"])
        #expect(replayed.allSatisfy { $0["builtIn"] as? Bool == false })
        func outcomes(_ name: String) -> [String] {
            (replayed.first { $0["name"] as? String == name }?["outcomes"] as? [[String: Any]] ?? []).map {
                "\($0["stage"] as? String ?? ""): \($0["kind"] as? String ?? "")"
            }
        }
        let modern = outcomes("ship by code")
        #expect(modern.first == "before expand: skipped", "\(modern)")
        #expect(modern.contains("after expand: worked") && modern.contains("after revert expand: skipped"), "\(modern)")
        #expect(outcomes("mark paid").first == "before expand: worked")
        #expect(outcomes("mark paid").contains("after expand: disagreed"), "\(outcomes("mark paid"))")
        let messages = (json["findings"] as? [[String: Any]] ?? []).filter { $0["severity"] as? String == "failure" }.compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.hasPrefix("after the old application's mark paid after expand, the legacy and modern representations disagree in ") },
                "\(messages)")
    }

    @Test func suggestListsTheStatementsPgStatStatementsSawOnTheTable() async throws {
        let folder = try Self.plan("""
            {"format": 2, "name": "orders-suggest", "table": "public.orders", "key": "id", "operations": [\(Self.statusCode)]}
            """)
        func phase(_ arguments: [String], on cluster: EphemeralCluster) async throws -> PhaseBinary.Run {
            let url = cluster.url(database: "postgres")
            return try await onThread { try PhaseBinary.run(arguments, databaseURL: url, environment: Self.gated) }
        }
        // Without the extension, the operator is told what to do. Some builds (pgserver's 16) do
        // not ship it at all; the rest of the test needs a server that does.
        let plain = try await EphemeralCluster.start()
        let missing = try await phase(["--plan", folder, "rehearse", "--suggest"], on: plain)
        #expect(missing.status == 1)
        #expect(missing.diagnostics.contains("cannot suggest statements: pg_stat_statements is not installed in this database"), "\(missing.diagnostics)")
        let shipped = try await onThread {
            try PostgresConnection(configuration: plain.configuration())
                .query("SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'pg_stat_statements'")[0].decode(Int64.self, "n") == 1
        }
        plain.stop()
        guard shipped else { return }
        let cluster = try await EphemeralCluster.start(options: .init(settings: ["shared_preload_libraries": "pg_stat_statements"]))
        defer { cluster.stop() }
        try await onThread {
            let connection = try PostgresConnection(configuration: cluster.configuration())
            try connection.execute(unsafeSQL: """
                CREATE EXTENSION pg_stat_statements;
                CREATE TABLE public.orders (id bigint PRIMARY KEY, status text NOT NULL);
                INSERT INTO public.orders SELECT n, 'new' FROM generate_series(1, 100) AS n;
                """)
            for id in 1...5 { try connection.query("UPDATE public.orders SET status = 'paid' WHERE id = \(Int64(id))") }
            try connection.query("SELECT status FROM public.orders WHERE id = \(Int64(3))")
        }
        let run = try await phase(["--plan", folder, "--format", "json", "rehearse", "--suggest"], on: cluster)
        #expect(run.status == 0, "\(run.diagnostics)")
        let suggestions = try #require(try Self.json(run)["suggestions"] as? [[String: Any]])
        let update = try #require(suggestions.first { ($0["sql"] as? String ?? "").hasPrefix("UPDATE public.orders SET status = $2 WHERE id = $1") },
                                  "\(suggestions)")
        #expect(update["calls"] as? Int == 5)
        #expect(update["application"] as? String == "legacy")
        #expect(update["parameters"] as? Int == 2)
        #expect(suggestions.contains { ($0["sql"] as? String ?? "").hasPrefix("SELECT status FROM public.orders WHERE id = $1") })
        #expect(!suggestions.contains { ($0["sql"] as? String ?? "").contains("CREATE") }, "only reads and writes are suggested")
        let text = try await phase(["--plan", folder, "rehearse", "--suggest"], on: cluster)
        #expect(text.output.contains("5 calls, legacy (2 values to fill in): UPDATE public.orders SET status = $2 WHERE id = $1"), "\(text.output)")
        #expect(text.output.contains(#""application" : "legacy""#) || text.output.contains(#""application": "legacy""#), "\(text.output)")
    }
}
