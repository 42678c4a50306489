import Cutover
import Foundation
import PostgresClient

extension PhaseRunner {
    /// The checks that must pass before `step`, run now; nothing is changed.
    ///
    /// Each check runs in a read-only transaction of its own, under its own statement timeout
    /// (``Options/checkTimeout``), on a session separate from the runner's, which holds
    /// nothing the runner depends on: a check that tries to write, times out or fails is a
    /// failed check naming itself, and whatever it does to its session cannot release the
    /// plan's lease or touch the step's transaction.
    public func checks(before step: PhaseStep, state: MigrationState) throws -> [CheckOutcome] {
        var results = [try appliedPlanUnchanged()]
        switch step {
        case .expand, .backfill, .contract, .revertExpand:
            results.append(try rowSecurityHidesNoRow())
        case .switchModern, .switchLegacy, .revertContract:
            break
        }
        switch step {
        case .expand:
            if let gate = try rehearsalCheck() { results.append(gate) }
            results += try planChecks(.expand)
            if let compiled = source.compiled {
                results.append(try expressionsCompile(compiled.expressionProbe))
                if let function = compiled.syncFunction { results.append(try readOnly { try syncFunctionIsOwn(function, on: $0) }) }
            }
        case .switchModern:
            results += try planChecks(.switch)
            if !options.isRehearsal { results.append(try readOnly(readersCheck)) }
        case .switchLegacy:
            results.append(try contractNotBegun())
        case .backfill:
            results += try planChecks(.backfill)
        case .contract:
            if let gate = try rehearsalCheck() { results.append(gate) }
            if !options.isRehearsal {
                results.append(try modernWriterWindow(state))
                let standbys = try surveyStandbys()
                results.append(try readOnly { try noLegacySessions(on: $0, standbys: standbys) })
                results.append(Self.standbysInspected(standbys))
                results.append(try readOnly(noLiveReaderNeedsV1))
                results.append(try readOnly(noRecentLegacyWrites))
            }
            results.append(try noV1OnlyRows())
            results += try planChecks(.contract)
        case .revertExpand:
            results += try (source.compiled?.expandRevertChecks ?? []).map(evaluate)
        case .revertContract:
            break
        }
        return results
    }

    /// Runs `body` on the check session in a read-only transaction under the check timeout,
    /// and rolls it back. The session is opened on first use, and again after it broke.
    func readOnly<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try rolledBack(isReadOnly: true, body)
    }

    /// Runs `body` on the check session in a transaction under the check timeout, read-only
    /// unless `isReadOnly` is false (for temporary objects only), and rolls it back.
    func rolledBack<T>(isReadOnly: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        let session = try checkSession()
        let timeout = Int64((options.checkTimeout / .milliseconds(1)).rounded(.up))
        let lockTimeout = min(timeout, Int64((options.sql.lockTimeout / .milliseconds(1)).rounded(.up)))
        do {
            try session.execute(unsafeSQL: """
                BEGIN\(isReadOnly ? " READ ONLY" : ""); SET LOCAL statement_timeout = '\(timeout)ms'; SET LOCAL lock_timeout = '\(lockTimeout)ms'
                """)
            defer {
                // A ROLLBACK that fails leaves a broken session, which the next check reopens.
                if session.isConnected { _ = try? session.execute(unsafeSQL: "ROLLBACK") }
            }
            return try body(session)
        } catch {
            if !session.isConnected { checkConnection = nil }
            throw error
        }
    }

    private func checkSession() throws -> PostgresConnection {
        if let checkConnection, checkConnection.isConnected { return checkConnection }
        let session = try openSession?() ?? PostgresConnection(configuration: connection.configuration)
        session.noticeHandler = { _ in }
        checkConnection = session
        return session
    }

    /// A check's failure as its observed value: a timeout says so; any other error is quoted.
    private func observedFailure(_ error: PostgresError) -> String {
        if error.sqlState == .queryCanceled, !options.isStopRequested() {
            return "timed out after \(DurationText.format(options.checkTimeout, smallestUnit: .seconds)) (\(Self.longerCheckTimeout))"
        }
        return "error: \(error.description)"
    }

    /// What lets a read that ran past the check timeout finish.
    static let longerCheckTimeout = "a longer check timeout, --check-timeout, lets it finish"

    /// The window contract waits for: the option's, else the plan's.
    var window: Duration { options.modernWriterWindow ?? plan.modernWriterWindow }

    /// The plan's own checks for a step kind, each on the check session.
    func planChecks(_ kind: PlanStep.Kind) throws -> [CheckOutcome] {
        try (plan.step(kind)?.checks ?? []).map(evaluate)
    }

    /// Runs one of the plan's checks on the check session, read-only, and compares what it
    /// observed with what the check expects; a check the server refuses fails with its error.
    func evaluate(_ check: PlanCheck) throws -> CheckOutcome {
        let sql: String
        switch check.query {
        case .inline(let text): sql = text
        case .file(let path): sql = source.text(path)
        }
        do {
            // A prepared statement: one statement only, so a check cannot end the read-only
            // transaction and go on outside it.
            let observed = try readOnly { session in
                try session.query(PostgresQuery(unsafeSQL: sql)).first.flatMap { $0.text(at: 0) }
            }
            return CheckOutcome(name: check.name, isPassed: check.expectation.evaluate(observed: observed),
                                observed: observed ?? "NULL", expected: check.expectation.description, message: check.message)
        } catch let error as PostgresError {
            if options.isStopRequested() { throw error }
            return CheckOutcome(name: check.name, isPassed: false, observed: observedFailure(error),
                                expected: check.expectation.description, message: check.message)
        }
    }

    /// No row has only the v1 representation that contract removes, by the backfill's own
    /// count: the runner's check, whatever the plan's checks say.
    func noV1OnlyRows() throws -> CheckOutcome {
        let name = "no v1-only rows"
        let message = "run backfill until it converts every row first"
        guard let backfill = plan.step(.backfill)?.backfill else {
            return CheckOutcome(name: name, isPassed: false, observed: "the plan has no backfill step to count them",
                                expected: "= 0", message: "add a backfill step to the plan")
        }
        do {
            let remaining = try readOnly { session in
                try BackfillEngine(plan: plan.name, batchSQL: "", remainingSQL: source.text(backfill.remaining.path))
                    .remaining(on: session)
            }
            return CheckOutcome(name: name, isPassed: remaining == 0, observed: "\(remaining)", expected: "= 0", message: message)
        } catch let error as PostgresError {
            if options.isStopRequested() { throw error }
            return CheckOutcome(name: name, isPassed: false, observed: observedFailure(error), expected: "= 0", message: message)
        }
    }

    /// Row-level security on the plan's table does not hold the runner's role: the backfill,
    /// its count of the rows still to convert and the checks of contract and of expand's revert
    /// would otherwise see only the rows the table's policies show that role, and report a table
    /// done whose hidden rows were never converted, or a revert safe that loses them. `phase`'s
    /// sessions also run with `row_security` off, so a statement the policies would filter fails
    /// instead; this check says so before anything runs. A table that does not exist (yet, or
    /// by that name) passes: there is nothing to hide; a name the server cannot read fails with
    /// its error.
    func rowSecurityHidesNoRow() throws -> CheckOutcome {
        let name = "row-level security hides no row"
        let expected = "the runner's role sees every row"
        let message = "the backfill, its count and these checks would see only the rows the policies show this role, and "
            + "contract would drop the legacy columns of the others unconverted: run phase as the table's owner (with no "
            + "FORCE ROW LEVEL SECURITY) or as a role with BYPASSRLS"
        do {
            let (isHeld, role) = try readOnly { session in
                let found = try session.query("""
                    SELECT coalesce((SELECT row_security_active(c.oid) FROM pg_catalog.pg_class c
                                      WHERE c.oid = to_regclass(\(plan.table)) AND c.relkind IN ('r', 'p')), false) AS held,
                           CAST(current_user AS text) AS role
                    """)[0]
                return (try found.decode(Bool.self, "held"), try found.decode(String.self, "role"))
            }
            return CheckOutcome(name: name, isPassed: !isHeld,
                                observed: isHeld ? "the policies of \(plan.table) hold role \(role)" : "none holds role \(role)",
                                expected: expected, message: message)
        } catch let error as PostgresError {
            if options.isStopRequested() { throw error }
            return CheckOutcome(name: name, isPassed: false, observed: observedFailure(error), expected: expected, message: message)
        }
    }

    /// Every live reader of the plan understands v2. With no live reader registered with the
    /// plan the check fails safe, unless the operator forces it (which the history records).
    func readersCheck(on session: PostgresConnection) throws -> CheckOutcome {
        let live = try ReaderRegistry.list(plan: plan.name, staleAfter: options.readerStaleAfter, on: session).filter(\.isLive)
        let expected = "every live reader lists v2"
        if live.isEmpty {
            return CheckOutcome(name: "live readers understand v2", isPassed: options.forceReaders,
                                observed: "no live reader registered" + (options.forceReaders ? " (forced with --force-readers)" : ""),
                                expected: expected,
                                message: "register the fleet's readers, or pass --force-readers if you know every reader reads v2")
        }
        let lacking = live.filter { !$0.readsV2 }
        return CheckOutcome(name: "live readers understand v2", isPassed: lacking.isEmpty,
                            observed: lacking.isEmpty ? "\(live.count) live, all read v2"
                                : "\(lacking.count) of \(live.count) live lack v2: " + Self.names(lacking),
                            expected: expected, message: "upgrade those instances, or wait until their heartbeats expire")
    }

    /// No live reader of the plan still needs the v1 representation that contract removes;
    /// another plan's readers read another table and are not asked.
    func noLiveReaderNeedsV1(on session: PostgresConnection) throws -> CheckOutcome {
        let needing = try ReaderRegistry.list(plan: plan.name, staleAfter: options.readerStaleAfter, on: session)
            .filter { $0.isLive && !$0.readsV2 }
        return CheckOutcome(name: "no live reader needs v1", isPassed: needing.isEmpty,
                            observed: needing.isEmpty ? "none" : "\(needing.count) live: " + Self.names(needing),
                            expected: "none", message: "those instances read only v1; upgrade or stop them first")
    }

    private static func names(_ readers: [ReaderInstance]) -> String {
        let shown = readers.prefix(5).map { "\($0.instanceID) (\($0.applicationName) \($0.applicationVersion): \($0.formats.joined(separator: ",")))" }
        return shown.joined(separator: ", ") + (readers.count > 5 ? " and \(readers.count - 5) more" : "")
    }

    /// Switching back to legacy needs the v1 representation, which contract removes.
    /// No other table's trigger calls the sync function this plan's expand creates or
    /// replaces: its name joins the table's schema and name, which two tables can share.
    func syncFunctionIsOwn(_ function: String, on session: PostgresConnection) throws -> CheckOutcome {
        let others = try session.query("""
            SELECT coalesce(string_agg(DISTINCT CAST(CAST(t.tgrelid AS regclass) AS text), ', '), '') AS tables
              FROM pg_trigger AS t
             WHERE t.tgfoid = to_regprocedure(\(function + "()"))
               AND t.tgrelid IS DISTINCT FROM to_regclass(\(plan.table))
            """)[0].decode(String.self, "tables")
        return CheckOutcome(
            name: "sync function not another table's", isPassed: others.isEmpty,
            observed: others.isEmpty ? "none" : "called by the trigger of \(others)",
            expected: "no other table's trigger calls \(function)()",
            message: "this plan's sync function would replace the one another table's trigger calls, as their schema and "
                + "table names join to the same name: finish or roll back that table's migration first (its contract or "
                + "'phase rollback expand' drops the function)")
    }

    func contractNotBegun() throws -> CheckOutcome {
        let applied = try appliedChecksums(step: .contract).keys.sorted()
        let revertible = !(plan.step(.contract)?.revert.isEmpty ?? true)
        return CheckOutcome(name: "contract not begun", isPassed: applied.isEmpty,
                            observed: applied.isEmpty ? "no contract file applied" : "applied: " + applied.joined(separator: ", "),
                            expected: "no contract file applied",
                            message: revertible ? "contract stopped half way; undo what it applied with 'phase rollback contract' first"
                                : "contract has begun and the plan gives it no revert; finish it and fix forward")
    }

    /// The modern writer has been the writer for at least the window.
    func modernWriterWindow(_ state: MigrationState) throws -> CheckOutcome {
        let required = window
        let expected = "modern for at least \(DurationText.format(required, smallestUnit: .seconds))"
        guard state.writerPath == .modern else {
            return CheckOutcome(name: "modern writer for the window", isPassed: false, observed: "writer is \(state.writerPath)",
                                expected: expected, message: "switch to the modern writer and wait out the window")
        }
        let seconds = try connection.query("""
            SELECT extract(epoch FROM now() - writer_switched_at)::float8 AS elapsed FROM cutover.migration_state WHERE plan = \(plan.name)
            """)[0].decode(Double?.self, "elapsed") ?? 0
        let elapsed = Duration.milliseconds(Int64(seconds * 1000))
        return CheckOutcome(name: "modern writer for the window", isPassed: elapsed >= required,
                            observed: "modern for \(DurationText.format(elapsed, smallestUnit: .seconds))", expected: expected,
                            message: "wait until the modern writer has run for the whole window")
    }

    /// No session whose application_name matches the plan's legacy pattern is connected, to the
    /// primary or to any inspected standby.
    func noLegacySessions(on session: PostgresConnection, standbys: StandbySurvey) throws -> CheckOutcome {
        guard let pattern = plan.legacyApplicationPattern else {
            return CheckOutcome(name: "no legacy session connected", isPassed: true, observed: "no pattern in the plan",
                                expected: "none connected", message: "")
        }
        let sessions = try session.query("""
            SELECT pid, application_name FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> \(connection.backendPID)
               AND application_name LIKE \(pattern)
             ORDER BY pid
            """).map { "pid \(try $0.decode(Int32.self, "pid")) (\(try $0.decode(String.self, "application_name")))" }
            + (try legacySessions(matching: pattern, on: standbys))
        return CheckOutcome(name: "no legacy session connected", isPassed: sessions.isEmpty,
                            observed: sessions.isEmpty ? "none" : "\(sessions.count) connected: " + sessions.joined(separator: ", "),
                            expected: "none connected matching '\(pattern)'",
                            message: "stop or upgrade the old application versions first")
    }

    /// No write in the legacy format reached the table within the window.
    func noRecentLegacyWrites(on session: PostgresConnection) throws -> CheckOutcome {
        let row = try session.query("""
            SELECT CASE WHEN last_write_at = '-infinity' THEN NULL
                        ELSE extract(epoch FROM now() - last_write_at)::float8 END AS age
              FROM cutover.legacy_activity WHERE table_name = \(plan.table)
            """).first
        let expected = "none within \(DurationText.format(window, smallestUnit: .seconds))"
        guard let row else {
            // No record at all: the check must not pass by omission, unless the plan changes
            // nothing an old writer writes.
            let isUntracked = source.compiled.map { !$0.tracksLegacyWrites } ?? false
            return CheckOutcome(name: "no legacy write within the window", isPassed: isUntracked,
                                observed: isUntracked ? "not tracked: \(source.compiled?.legacyWritesNote ?? "")"
                                    : "not tracked: cutover.legacy_activity has no row for \(plan.table)",
                                expected: expected,
                                message: "the plan's expand must record legacy writes in cutover.legacy_activity under "
                                    + "'\(plan.table)' (see docs/plans.md); a declarative plan's trigger does")
        }
        guard let age = try row.decode(Double?.self, "age") else {
            return CheckOutcome(name: "no legacy write within the window", isPassed: true, observed: "none seen",
                                expected: expected, message: "")
        }
        let elapsed = Duration.milliseconds(Int64(age * 1000))
        return CheckOutcome(name: "no legacy write within the window", isPassed: elapsed >= window,
                            observed: "last one \(DurationText.format(elapsed, smallestUnit: .seconds)) ago", expected: expected,
                            message: "something still writes the legacy format; find it before removing that format")
    }
}
