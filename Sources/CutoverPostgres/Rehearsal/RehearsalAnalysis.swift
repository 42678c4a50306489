import Cutover
import Foundation

/// From what a rehearsal observed on the sample to what the real table would see, and the
/// findings an operator reads: pure arithmetic over the observations, testable without a server.
public enum RehearsalAnalysis {
    /// How the sample relates to the real table.
    public struct Scale: Sendable, Equatable, Codable {
        /// Rows copied into the scratch table.
        public var sampleRows: Int64
        /// Rows of the real table, as the server estimates them (`pg_class.reltuples`, or
        /// `pg_stat_user_tables.n_live_tup` when larger), never fewer than the sample.
        public var tableRows: Int64
        /// The real table's size on disk with its indexes and TOAST (`pg_total_relation_size`).
        public var tableBytes: Int64

        /// A scale; see each property.
        public init(sampleRows: Int64, tableRows: Int64, tableBytes: Int64) {
            self.sampleRows = sampleRows
            self.tableRows = max(tableRows, sampleRows)
            self.tableBytes = tableBytes
        }

        /// How many times the real table's rows outnumber the sample's (1 for a table copied whole).
        public var factor: Double { sampleRows > 0 ? max(1, Double(tableRows) / Double(sampleRows)) : 1 }
    }

    /// What a statement would cost on the real table.
    public struct Estimate: Sendable, Equatable, Codable {
        /// Whether its work grows with the table's rows: it read at least half the sample, rewrote a
        /// relation, built an index or validated a constraint. Otherwise it changes the catalog only
        /// and its time is taken as it was.
        public var scalesWithRows: Bool
        /// Its estimated time on the real table, in microseconds.
        public var microseconds: Int64
        /// Its estimated WAL on the real table, in bytes, of the scope its observation measured
        /// (``StatementObservation/walScope``).
        public var walBytes: Int64
        /// How long its strongest lock on the table would be held, in microseconds: until its
        /// transaction ends, so the rest of the file's statements count too; nil when it took none.
        public var lockHeldMicroseconds: Int64?
        /// Whether a statement the lock is held through grows with the table's rows; when none
        /// does, the lock's time is the catalog's and the server's load, whatever the table's size.
        public var lockHeldScalesWithRows: Bool = false
    }

    /// The estimate of each observation, in order, for `table` under `scale`.
    public static func estimates(_ observations: [StatementObservation], table: String, scale: Scale) -> [Estimate] {
        let own = observations.map { observation -> (Bool, Int64, Int64) in
            let visitedMost = (observation.rowsVisited ?? 0) * 2 >= max(1, scale.sampleRows)
            let scales = visitedMost || !observation.rewritten.isEmpty || !observation.indexesBuilt.isEmpty
                || !observation.constraintsValidated.isEmpty || observation.file == nil
            let factor = scales ? scale.factor : 1
            return (scales, Int64((Double(observation.microseconds) * factor).rounded()),
                    Int64((Double(observation.walBytes) * factor).rounded()))
        }
        return observations.indices.map { index in
            let observation = observations[index]
            var held: Int64?
            var heldScales = false
            if observation.lock(on: table) != nil {
                // In a transaction, a lock is held until the transaction ends; outside one, for
                // the statement alone.
                let span = observation.isInTransaction
                    ? observations.indices.filter { $0 >= index && observations[$0].transaction == observation.transaction }
                    : [index]
                held = span.reduce(0) { $0 + own[$1].1 }
                heldScales = span.contains { own[$0].0 }
            }
            return Estimate(scalesWithRows: own[index].0, microseconds: own[index].1, walBytes: own[index].2, lockHeldMicroseconds: held,
                            lockHeldScalesWithRows: heldScales)
        }
    }

    /// Everything worth telling, most serious first (in rehearsal order within a severity).
    ///
    /// - Parameters:
    ///   - lockTimeout: the longest the plan lets a statement wait for a lock; a lock that
    ///     keeps the application waiting longer than this is a failure.
    ///   - standbys: how many standbys replay the server's WAL.
    public static func findings(observations: [StatementObservation], estimates: [Estimate], table: String, scale: Scale,
                                lockTimeout: Duration, standbys: Int, replays: [ApplicationStatement], outcomes: [ReplayOutcome]) -> [RehearsalFinding] {
        var findings: [RehearsalFinding] = []
        let timeout = Int64((lockTimeout / .microseconds(1)).rounded())
        for (index, (observation, estimate)) in zip(observations, estimates).enumerated() {
            let statement = observation.statement
            // The strongest lock on the table the statement ran under: its own, or one an earlier
            // statement of its transaction took (held until the transaction ends).
            let held = observations[...index].filter { $0.transaction == observation.transaction && ($0.isInTransaction || $0 == observation) }
                .compactMap { $0.lock(on: table) }.max()
            if let error = observation.error {
                findings.append(.init(severity: .failure, step: observation.step, statement: statement,
                                      message: "the step fails here on the copy: \(error)"))
            }
            if let mode = observation.lock(on: table), mode.blocksWrites, let held = estimate.lockHeldMicroseconds {
                let waits = mode.blocksReads ? "the table will be unavailable: reads and writes wait" : "writes to the table wait"
                let text = "\(mode) on \(table) for an estimated \(time(held))"
                if held > timeout, estimate.lockHeldScalesWithRows {
                    findings.append(.init(severity: .failure, step: observation.step, statement: statement,
                                          message: "\(text), longer than the lock timeout of \(time(timeout)): \(waits)"))
                } else if held > timeout {
                    // Statements that change the catalog only take as long on the real table as on the
                    // copy: what the copy measured over the timeout is the server's load at that moment.
                    findings.append(.init(severity: .note, step: observation.step, statement: statement,
                                          message: "\(mode) on \(table) for \(time(held)) on the copy, longer than the lock timeout of "
                                              + "\(time(timeout)), though it changes the catalog only, whatever the table's size: the server "
                                              + "was busy; \(waits) while it is held"))
                } else if estimate.scalesWithRows {
                    findings.append(.init(severity: .note, step: observation.step, statement: statement,
                                          message: "\(text), within the lock timeout of \(time(timeout)); \(waits) meanwhile"))
                }
            }
            if !observation.rewritten.isEmpty {
                findings.append(.init(severity: .warning, step: observation.step, statement: statement,
                                      message: "rewrites \(observation.rewritten.joined(separator: ", ")): an estimated \(time(estimate.microseconds)) and \(ReplicationText.bytes(estimate.walBytes)) of \(observation.walScope == .session ? "" : "server-wide ")WAL on the real table"))
            }
            if !observation.indexesBuilt.isEmpty, let mode = held, mode.blocksWrites {
                findings.append(.init(severity: .warning, step: observation.step, statement: statement,
                                      message: "index \(observation.indexesBuilt.joined(separator: ", ")) built without CONCURRENTLY on a table of \(count(scale.tableRows)) rows: writes wait for the whole build"))
            }
            for constraint in observation.constraintsValidated {
                findings.append(.init(severity: .warning, step: observation.step, statement: statement,
                                      message: "constraint \(constraint) added without NOT VALID: every row is read under \(held?.description ?? "its lock") (add it NOT VALID, then VALIDATE CONSTRAINT under SHARE UPDATE EXCLUSIVE)"))
            }
            if observation.isLockSampled, observation.locks.isEmpty {
                findings.append(.init(severity: .note, step: observation.step, statement: statement,
                                      message: "no lock was seen while it ran outside a transaction (sampled; it may have held one too briefly to see)"))
            }
        }
        let wal = estimates.reduce(Int64(0)) { $0 + $1.walBytes }
        if standbys > 0 {
            let serverWide = zip(observations, estimates).filter { $0.0.walScope == .serverWide }.reduce(Int64(0)) { $0 + $1.1.walBytes }
            let measure = serverWide == 0 ? "" : serverWide == wal
                ? " (measured server-wide: other sessions' WAL during the statements is counted too)"
                : " (\(ReplicationText.bytes(serverWide)) of it measured server-wide: other sessions' WAL during those statements is counted too)"
            findings.append(.init(severity: wal >= 1 << 30 ? .warning : .note, step: "all steps",
                                  message: "\(standbys == 1 ? "a standby" : "each of \(standbys) standbys") will replay an estimated \(ReplicationText.bytes(wal)) of WAL\(measure)"))
        }
        findings += replayFindings(replays, outcomes)
        return findings.enumerated().sorted { ($0.element.severity, $0.offset) < ($1.element.severity, $1.offset) }.map(\.element)
    }

    /// The findings of the applications' statements: one that worked and then fails, or after
    /// which the representations disagree, breaks the application; one that never ran on the
    /// copy is noted.
    public static func replayFindings(_ statements: [ApplicationStatement], _ outcomes: [ReplayOutcome]) -> [RehearsalFinding] {
        var findings: [RehearsalFinding] = []
        for statement in statements {
            let own = outcomes.filter { $0.statement == statement.name }
            let who = statement.application == .legacy ? "the old application's" : "the new application's"
            guard let worked = own.firstIndex(where: { $0.kind == .worked || $0.kind == .disagreed }) else {
                if let failed = own.first(where: { $0.kind == .failed }) {
                    findings.append(.init(severity: .note, step: failed.stage, statement: statement.sql,
                                          message: "\(who) \(statement.name) fails on the copy \(failed.stage) already, so it is not judged: \(failed.detail ?? "")"))
                }
                continue
            }
            for outcome in own[worked...] {
                switch outcome.kind {
                case .failed:
                    findings.append(.init(severity: .failure, step: outcome.stage, statement: statement.sql,
                                          message: "\(who) \(statement.name) worked \(own[worked].stage) and fails \(outcome.stage): \(outcome.detail ?? "")"))
                case .disagreed:
                    findings.append(.init(severity: .failure, step: outcome.stage, statement: statement.sql,
                                          message: "after \(who) \(statement.name) \(outcome.stage), the legacy and modern representations disagree in \(outcome.detail ?? "some column")"))
                case .worked, .skipped:
                    break
                }
            }
        }
        return findings
    }

    /// A time in words: `850µs`, `12ms`, `4.2s`, `3m5s`.
    public static func time(_ microseconds: Int64) -> String {
        if microseconds < 1000 { return "\(microseconds)µs" }
        if microseconds < 1_000_000 { return "\(microseconds / 1000)ms" }
        return ReplicationText.lag(.microseconds(microseconds))
    }

    /// A count with thousands separated: `10,000,000`.
    public static func count(_ value: Int64) -> String {
        let digits = Array(String(value.magnitude))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (value < 0 ? "-" : "") + text
    }
}
