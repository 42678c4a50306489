import Cutover
import Foundation
import PostgresClient

/// Runs a plan on a scratch copy of its table on the same server, before expand touches the
/// real one, and reports what the real run would do: the locks every statement takes (observed
/// in `pg_locks`), the relations it rewrites, its time and WAL on the sample and estimated for
/// the real table, and whether the applications' statements still work after every step.
///
/// The copy lives in a scratch database the rehearsal creates (``RehearsalRegistry`` records it
/// first, so that one left by a killed rehearsal is dropped by the next `phase` command) and
/// always drops. On the real database the rehearsal only reads: the catalog, the table's size and
/// a sample of its rows, under the plan's lock timeout.
///
/// ```swift
/// let report = try Rehearsal(connection: connection, source: try PlanSource.folder("plans/orders")).run()
/// print(report.verdict)   // .passed
/// ```
public final class Rehearsal {
    /// How the rehearsal runs.
    public struct Options: Sendable {
        /// Rows copied from the real table (at most; fewer when it has fewer).
        public var sampleRows: Int
        /// Lock and statement timeouts of the plan's files, as the real steps will run them; a lock
        /// that would keep the application waiting longer than the lock timeout fails the rehearsal.
        public var sql: SQLFileRunner.Policy
        /// The longest one replayed statement may run.
        public var statementTimeout: Duration
        /// Who runs it, for the record.
        public var osUser: String
        /// Whether the operator asked it to stop (a signal); it stops at the next statement or step.
        public var isStopRequested: @Sendable () -> Bool

        /// The defaults: 10,000 rows, the runner's default timeouts.
        public init(sampleRows: Int = 10_000, sql: SQLFileRunner.Policy = .init(), statementTimeout: Duration = .seconds(30),
                    osUser: String = PhaseHistory.osUser,
                    isStopRequested: @escaping @Sendable () -> Bool = { false }) {
            self.sampleRows = sampleRows
            self.sql = sql
            self.statementTimeout = statementTimeout
            self.osUser = osUser
            self.isStopRequested = isStopRequested
        }
    }

    /// What a rehearsal did and found.
    public struct Report: Sendable, Equatable, Codable {
        /// Whether the plan may run.
        public enum Verdict: String, Sendable, Equatable, Codable {
            /// Nothing would break the application or hold a strong lock past the lock timeout.
            case passed
            /// At least one finding is a failure.
            case failed
        }

        /// The plan's name.
        public var plan: String
        /// The table copied, schema-qualified.
        public var table: String
        /// The plan's checksum, which the gate of expand and contract compares.
        public var checksum: String
        /// The rehearsal's number in `cutover.rehearsals`.
        public var id: Int64
        /// The scratch database it ran in, dropped since.
        public var scratchDatabase: String
        /// The sample beside the real table.
        public var scale: RehearsalAnalysis.Scale
        /// The steps run, in order.
        public var steps: [String]
        /// What every statement did on the copy, in order.
        public var observations: [StatementObservation]
        /// What each observation would cost on the real table, in the same order.
        public var estimates: [RehearsalAnalysis.Estimate]
        /// The applications' statements replayed.
        public var statements: [ApplicationStatement]
        /// How each replay came out, at each point.
        public var replays: [ReplayOutcome]
        /// The findings, most serious first.
        public var findings: [RehearsalFinding]
        /// What the copy left out, and what the rehearsal could not judge.
        public var notes: [String]
        /// The lock timeout judged against, in milliseconds.
        public var lockTimeoutMilliseconds: Int64
        /// Whether the plan may run.
        public var verdict: Verdict
    }

    private let connection: PostgresConnection
    private let source: PlanSource
    private let options: Options
    private let log: @Sendable (String) -> Void

    /// A rehearsal of `source` on the database `connection` is in; `log` receives one line per step.
    public init(connection: PostgresConnection, source: PlanSource, options: Options = Options(),
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.connection = connection
        self.source = source
        self.options = options
        self.log = log
    }

    /// The plan's checksum as the gate compares it: sha256 of ``PlanSource/checksumText``.
    public static func checksum(of source: PlanSource, on connection: PostgresConnection) throws -> String {
        try connection.query("SELECT encode(sha256(convert_to(\(source.checksumText), 'UTF8')), 'hex') AS sum")[0].decode(String.self, "sum")
    }

    /// Runs the rehearsal and records it; the scratch database is gone when this returns or throws.
    ///
    /// - Throws: ``RehearsalError`` when it cannot run (no table, the plan past baseline, no
    ///   right to create a database, stopped); a `PostgresError` from the real database.
    public func run() throws -> Report {
        try ControlSchema.verify(on: connection)
        let plan = source.plan
        if let state = try MigrationState.load(plan: plan.name, on: connection), state.phase != .baseline {
            throw RehearsalError.notAtBaseline(plan: plan.name, phase: state.phase.rawValue)
        }
        for dropped in try RehearsalRegistry.dropAbandoned(on: connection).dropped {
            log("dropped scratch database \(dropped), left by a rehearsal that was killed")
        }
        let checksum = try Self.checksum(of: source, on: connection)
        let blueprint = try TableBlueprint.read(table: plan.table, on: connection)
        let (rows, scale) = try sample(blueprint)
        log("read \(rows.count) rows of \(blueprint.table) (of about \(RehearsalAnalysis.count(scale.tableRows)))")
        let name = ScratchDatabase.name()
        let id = try RehearsalRegistry.begin(plan: plan.name, checksum: checksum, scratchDatabase: name,
                                             sampleRows: Int64(rows.count), osUser: options.osUser, on: connection)
        var report: Report?
        defer {
            // Always: drop the copy, then record the end (interrupted when no report was made).
            var isDropped = false
            do {
                try ScratchDatabase.drop(name, on: connection)
                isDropped = true
            } catch {
                log("could not drop scratch database \(name) (\(error)); the next phase command drops it")
            }
            let verdict = report?.verdict.rawValue ?? (options.isStopRequested() ? "interrupted" : "error")
            do {
                let json = try report.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                try RehearsalRegistry.finish(id, verdict: verdict, report: json, isDropped: isDropped, on: connection)
            } catch {
                // The gate reads this row: without it, expand is refused as if the plan were never rehearsed.
                log("could not record rehearsal \(id) as \(verdict) (\(error)); the next phase command records it interrupted")
            }
        }
        try ScratchDatabase.create(name, like: connection)
        var configuration = connection.configuration
        configuration.parameters["dbname"] = name
        configuration.applicationName = "cutover-rehearsal"
        let scratch = try PostgresConnection(configuration: configuration)
        scratch.noticeHandler = { _ in }
        let made = try rehearse(blueprint: blueprint, rows: rows, scale: scale, checksum: checksum, id: id, scratchName: name,
                                scratch: scratch, configuration: configuration)
        report = made
        return made
    }

    /// The sample of the real table's rows, each as the text of its row value, and the scale.
    ///
    /// Read on a session of its own, closed after, whose statements each run alone in their
    /// transaction, read-only, under the lock timeout as their `lock_timeout` and their
    /// `statement_timeout` both: the lock one takes on the real table ends with it, so neither
    /// a DDL of the application waiting for ACCESS EXCLUSIVE nor the writes queued behind that
    /// DDL wait for the rehearsal longer than the lock timeout.
    ///
    /// - Throws: ``RehearsalError/sampleNotReadInTime(table:lockTimeout:attempts:)`` when a
    ///   statement did not get its lock or finish within the lock timeout in any of
    ///   ``sampleAttempts`` attempts (fewer when the policy gives a step's DDL fewer).
    private func sample(_ blueprint: TableBlueprint) throws -> ([String], RehearsalAnalysis.Scale) {
        let bound = Int64((options.sql.lockTimeout / .milliseconds(1)).rounded(.up))
        let session = try PostgresConnection(configuration: connection.configuration)
        session.noticeHandler = { _ in }
        try session.execute(unsafeSQL: """
            SET default_transaction_read_only = on; SET lock_timeout = '\(bound)ms'; SET statement_timeout = '\(bound)ms'
            """)
        // A read the timeout stopped (waiting for its lock, or slow on a busy server) is tried
        // again like a step's DDL, after a backoff, but 5 times at most: a sample too large to
        // read within the timeout would never be read, and the operator learns it soon.
        var policy = options.sql
        policy.maximumAttempts = max(1, min(policy.maximumAttempts, Self.sampleAttempts))
        let runner = SQLFileRunner(policy: policy) { [log] attempt, delay, _ in
            log("could not read the sample within the lock timeout; retry \(attempt) in \(Int64((delay / .milliseconds(1)).rounded()))ms")
        }
        let isStopRequested = options.isStopRequested
        let isTimeout = { (error: PostgresError) in error.sqlState == .queryCanceled || error.sqlState == .lockNotAvailable }
        do {
            return try runner.retrying(when: { error in
                guard let error = error as? PostgresError, !isStopRequested() else { return false }
                return isTimeout(error)
            }) { _ in try readSample(blueprint, on: session) }
        } catch let error as PostgresError where isTimeout(error) {
            if options.isStopRequested() { throw error }
            throw RehearsalError.sampleNotReadInTime(table: blueprint.table, lockTimeout: options.sql.lockTimeout,
                                                     attempts: policy.maximumAttempts)
        }
    }

    /// The most attempts to read the sample.
    static let sampleAttempts = 5

    private func readSample(_ blueprint: TableBlueprint, on session: PostgresConnection) throws -> ([String], RehearsalAnalysis.Scale) {
        let size = try session.query("""
            SELECT greatest(c.reltuples, 0)::bigint AS estimate, coalesce(s.n_live_tup, 0) AS live, pg_total_relation_size(c.oid) AS bytes
              FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass(\(blueprint.table))
            """)[0]
        let estimate = max(try size.decode(Int64.self, "estimate"), try size.decode(Int64.self, "live"))
        let percentage = RepresentationComparison.samplePercentage(sample: options.sampleRows, estimatedRows: Double(estimate))
        let sampling = percentage < 100 ? " TABLESAMPLE SYSTEM (\(percentage))" : ""
        let rows = try session.query(PostgresQuery(unsafeSQL: "SELECT t::text AS r FROM \(blueprint.table) AS t\(sampling) LIMIT $1",
                                                   binds: [Int64(options.sampleRows).postgresBind]))
            .map { try $0.decode(String.self, "r") }
        return (rows, RehearsalAnalysis.Scale(sampleRows: Int64(rows.count), tableRows: estimate, tableBytes: try size.decode(Int64.self, "bytes")))
    }

    private func rehearse(blueprint: TableBlueprint, rows: [String], scale: RehearsalAnalysis.Scale, checksum: String, id: Int64,
                          scratchName: String, scratch: PostgresConnection, configuration: PostgresConfiguration) throws -> Report {
        var notes = blueprint.notes
        for statement in blueprint.before {
            do {
                _ = try scratch.execute(unsafeSQL: statement)
            } catch let error as PostgresError where statement.hasPrefix("CREATE EXTENSION") {
                notes.append("\(statement) failed on the scratch database (\(error.message)); what needs it may fail there")
            }
        }
        try copy(rows, into: blueprint, on: scratch)
        for statement in blueprint.after { _ = try scratch.execute(unsafeSQL: statement) }
        _ = try scratch.execute(unsafeSQL: "ANALYZE \(blueprint.table)")
        let tableOID = try scratch.query("SELECT to_regclass(\(blueprint.table))::oid::bigint AS oid")[0].decode(Int64.self, "oid")
        let probe = RehearsalProbe(tableOID: tableOID, configuration: configuration,
                                   countsSessionWAL: try RehearsalProbe.countsSessionWAL(on: scratch))
        var runnerOptions = PhaseRunner.Options(sql: options.sql, forceReaders: true, modernWriterWindow: .zero,
                                                isStopRequested: options.isStopRequested)
        runnerOptions.statementObserver = probe
        runnerOptions.isRehearsal = true
        let openSession: @Sendable () throws -> PostgresConnection = {
            let session = try PostgresConnection(configuration: configuration)
            session.noticeHandler = { _ in }
            return session
        }
        let runner = PhaseRunner(connection: scratch, source: source, options: runnerOptions, log: { _ in }, openSession: openSession)
        try runner.initialize()

        let statements = try source.plan.statements.isEmpty
            ? StatementReplay.builtIn(table: blueprint.table, key: source.compiled?.declaration.key,
                                      legacyColumns: source.compiled?.declaration.writerColumns.legacy,
                                      copyColumns: blueprint.copyColumns, on: scratch)
            : source.plan.statements
        if statements.isEmpty { notes.append("no application statement was replayed: the copy holds fewer than two rows and the plan declares none") }
        let replay = StatementReplay(statements: statements, comparison: source.compiled?.representationComparison,
                                     statementTimeout: options.statementTimeout)
        var outcomes = try replay.replay(at: "before expand", compares: false, on: scratch)
        var steps: [String] = []
        var failure: RehearsalFinding?
        var losses: [RehearsalFinding] = []
        var seen: [PhaseStep: Int] = [:]
        for (step, hasModernColumns) in Self.sequence {
            seen[step, default: 0] += 1
            let label = step.name + (seen[step, default: 1] > 1 ? " (\(seen[step, default: 1]))" : "")
            if options.isStopRequested() { throw RehearsalError.stopped(at: "before \(label)") }
            log("rehearsing \(label)")
            steps.append(label)
            probe.stepStarts(label)
            // A rollback keeps every row written before it; the table may not be where it was
            // after a hand-written expand, and then it is not counted.
            let rowsBefore = step == .revertExpand ? (try? rowCount(blueprint.table, on: scratch)) : nil
            do {
                if step == .backfill {
                    try observeBackfill(label, runner: runner, probe: probe, scratch: scratch)
                } else {
                    try runner.run(step)
                }
            } catch let refusal as StepRefusal {
                failure = RehearsalFinding(severity: .failure, step: label, message: "the step is refused on the copy: \(refusal.description)")
                break
            } catch let error as PostgresError {
                if options.isStopRequested() { throw RehearsalError.stopped(at: "during \(label)") }
                let observed = probe.observations.last?.error != nil
                failure = RehearsalFinding(severity: .failure, step: label, message: observed
                    ? "the step stops on the copy; nothing after it was rehearsed"
                    : "the step fails on the copy: \(error.description)")
                break
            }
            if let rowsBefore {
                // Counted before, the table must still be there to count after: a rollback that
                // drops it loses every row.
                do {
                    let rowsAfter = try rowCount(blueprint.table, on: scratch)
                    if rowsAfter < rowsBefore {
                        losses.append(RehearsalFinding(severity: .failure, step: label, message: """
                            the rollback loses rows: the copy held \(RehearsalAnalysis.count(rowsBefore)) rows before it and \(RehearsalAnalysis.count(rowsAfter)) after; \
                            a rollback must keep every row written before it
                            """))
                    }
                } catch {
                    losses.append(RehearsalFinding(severity: .failure, step: label, message: """
                        the rollback leaves the table unreadable: the copy held \(RehearsalAnalysis.count(rowsBefore)) rows before it, and after it \
                        counting them failed (\((error as? PostgresError)?.description ?? "\(error)")); a rollback must keep every row written before it
                        """))
                }
            }
            if step != .contract {
                outcomes += try replay.replay(at: "after \(label)", compares: hasModernColumns, on: scratch)
            }
        }
        let observations = probe.observations
        let estimates = RehearsalAnalysis.estimates(observations, table: blueprint.table, scale: scale)
        let standbys = try connection.query("SELECT count(*) AS n FROM pg_stat_replication")[0].decode(Int64.self, "n")
        var findings = RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: blueprint.table, scale: scale,
                                                  lockTimeout: options.sql.lockTimeout, standbys: Int(standbys),
                                                  replays: statements, outcomes: outcomes)
        for finding in [failure].compactMap({ $0 }) + losses {
            findings.insert(finding, at: findings.firstIndex { $0.severity != .failure } ?? findings.count)
        }
        return Report(plan: source.plan.name, table: blueprint.table, checksum: checksum, id: id, scratchDatabase: scratchName,
                      scale: scale, steps: steps, observations: observations, estimates: estimates, statements: statements,
                      replays: outcomes, findings: findings, notes: notes,
                      lockTimeoutMilliseconds: Int64((options.sql.lockTimeout / .milliseconds(1)).rounded(.up)),
                      verdict: findings.contains { $0.severity == .failure } ? .failed : .passed)
    }

    /// Every step forward and every rollback the plan allows, in the order the rehearsal runs
    /// them, each with whether the modern columns exist after it (the representations are
    /// compared only then): expand and its revert from a table with no modern data yet; the
    /// switch and its rollback before and after a backfill; then, after switching back from a
    /// backfilled table, the revert of expand while the modern columns hold converted rows;
    /// and the whole way forward again to contract. Not a contract's revert: the phases allow
    /// no rollback once contract has run, and that revert only undoes a contract stopped part way.
    static let sequence: [(PhaseStep, Bool)] = [
        (.expand, true), (.revertExpand, false), (.expand, true), (.switchModern, true), (.switchLegacy, true),
        (.switchModern, true), (.backfill, true), (.switchLegacy, true), (.switchModern, true), (.backfill, true),
        (.switchLegacy, true), (.revertExpand, false), (.expand, true), (.switchModern, true), (.backfill, true), (.contract, false),
    ]

    /// The rows of `table` on the copy.
    private func rowCount(_ table: String, on scratch: PostgresConnection) throws -> Int64 {
        try scratch.query(PostgresQuery(unsafeSQL: "SELECT count(*) AS n FROM \(table)"))[0].decode(Int64.self, "n")
    }

    /// Copies `rows` (row values as text) into the scratch table, a thousand at a time.
    private func copy(_ rows: [String], into blueprint: TableBlueprint, on scratch: PostgresConnection) throws {
        let columns = blueprint.copyColumns.joined(separator: ", ")
        let values = blueprint.copyColumns.map { "(r::\(blueprint.table)).\($0)" }.joined(separator: ", ")
        let overriding = blueprint.hasAlwaysIdentity ? " OVERRIDING SYSTEM VALUE" : ""
        var start = 0
        while start < rows.count {
            let batch = Array(rows[start..<min(rows.count, start + 1000)])
            let json = String(decoding: try JSONEncoder().encode(batch), as: UTF8.self)
            try scratch.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(blueprint.table) (\(columns))\(overriding) SELECT \(values) FROM jsonb_array_elements_text($1::jsonb) AS r
                """, binds: [json.postgresBind]))
            start += 1000
        }
    }

    /// Runs backfill on the copy, watching it as one statement: its locks sampled, its time and
    /// WAL (its session's own where the server counts it: every batch of the rehearsal's
    /// backfill runs on the scratch session, one worker).
    private func observeBackfill(_ label: String, runner: PhaseRunner, probe: RehearsalProbe, scratch: PostgresConnection) throws {
        let wal = { () throws -> Int64 in
            if probe.countsSessionWAL { return try RehearsalProbe.sessionWALBytes(on: scratch) }
            return try scratch.query("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS bytes")[0].decode(Int64.self, "bytes")
        }
        let before = try wal()
        let started = ContinuousClock.now
        probe.startSampling(scratch.backendPID)
        var failure: (any Error)?
        do { try runner.run(.backfill) } catch { failure = error }
        let locks = try probe.stopSampling()
        let microseconds = Int64(((ContinuousClock.now - started) / .microseconds(1)).rounded())
        let written = try wal() - before
        let batch = source.plan.step(.backfill)?.backfill.map { "batches of \($0.batch.path)" } ?? "no backfill file"
        probe.record(StatementObservation(step: label, file: nil, transaction: probe.nextTransaction(), isInTransaction: false,
                                          statement: "backfill (\(batch))", locks: locks, isLockSampled: true,
                                          microseconds: microseconds, rowsVisited: nil, walBytes: written,
                                          walScope: probe.countsSessionWAL ? .session : .serverWide,
                                          error: failure.map { ($0 as? PostgresError)?.description ?? "\($0)" }))
        if let failure { throw failure }
    }
}
