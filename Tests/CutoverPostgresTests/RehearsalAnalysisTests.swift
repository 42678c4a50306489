import Cutover
@testable import CutoverPostgres
import Testing

/// From observations on a sample to estimates and findings, without a server.
@Suite("Rehearsal analysis")
struct RehearsalAnalysisTests {
    private static let table = "public.orders"

    private static func observation(_ statement: String, transaction: Int, lock: LockMode?, microseconds: Int64, visited: Int64? = 0,
                                    wal: Int64 = 100, rewritten: [String] = [], built: [String] = [], validated: [String] = [],
                                    inTransaction: Bool = true, walScope: StatementObservation.WALScope = .serverWide) -> StatementObservation {
        StatementObservation(step: "expand", file: "x.sql", transaction: transaction, isInTransaction: inTransaction, statement: statement,
                             locks: lock.map { [.init(relation: table, mode: $0)] } ?? [], isLockSampled: !inTransaction,
                             microseconds: microseconds, rowsVisited: visited, walBytes: wal, walScope: walScope, rewritten: rewritten,
                             indexesBuilt: built, constraintsValidated: validated)
    }

    @Test func onlyWorkThatReadsTheRowsIsScaledAndALockIsHeldUntilItsTransactionEnds() {
        let scale = RehearsalAnalysis.Scale(sampleRows: 1000, tableRows: 100_000, tableBytes: 1 << 30)
        #expect(scale.factor == 100)
        let observations = [
            Self.observation("ALTER TABLE orders ADD COLUMN c int", transaction: 1, lock: .accessExclusive, microseconds: 500),
            Self.observation("UPDATE orders SET c = 1", transaction: 1, lock: nil, microseconds: 2_000, visited: 1_000, wal: 50_000),
            Self.observation("CREATE INDEX CONCURRENTLY i ON orders (c)", transaction: 2, lock: .shareUpdateExclusive, microseconds: 3_000,
                             built: ["public.i"], inTransaction: false),
        ]
        let estimates = RehearsalAnalysis.estimates(observations, table: Self.table, scale: scale)
        #expect(estimates.map(\.scalesWithRows) == [false, true, true])
        #expect(estimates.map(\.microseconds) == [500, 200_000, 300_000])
        #expect(estimates[1].walBytes == 5_000_000)
        // The ADD COLUMN's lock is held through the UPDATE of its transaction.
        #expect(estimates[0].lockHeldMicroseconds == 200_500)
        #expect(estimates[1].lockHeldMicroseconds == nil)
        #expect(estimates[2].lockHeldMicroseconds == 300_000)

        let findings = RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: Self.table, scale: scale,
                                                  lockTimeout: .milliseconds(500), standbys: 1, replays: [], outcomes: [])
        #expect(findings.first?.severity == .note || findings.allSatisfy { $0.severity != .failure },
                "200ms of ACCESS EXCLUSIVE is within a 500ms lock timeout: \(findings)")
        #expect(findings.contains { $0.message.hasPrefix("a standby will replay an estimated ") })
        let strict = RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: Self.table, scale: scale,
                                                lockTimeout: .milliseconds(100), standbys: 0, replays: [], outcomes: [])
        #expect(strict.first?.severity == .failure)
        #expect(strict.first?.message == "ACCESS EXCLUSIVE on public.orders for an estimated 200ms, longer than the lock timeout of 100ms: the table will be unavailable: reads and writes wait")
        #expect(!strict.contains { $0.message.contains("standby") })
    }

    @Test func aLockHeldOverTheTimeoutThroughCatalogChangesAloneIsANoteNotAFailure() {
        let scale = RehearsalAnalysis.Scale(sampleRows: 1000, tableRows: 100_000, tableBytes: 1 << 30)
        // A busy server: the catalog-only ALTER and CREATE TRIGGER took 700ms on the copy.
        let observations = [
            Self.observation("ALTER TABLE orders ADD COLUMN c int", transaction: 1, lock: .accessExclusive, microseconds: 400_000),
            Self.observation("CREATE TRIGGER t BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION f()", transaction: 1,
                             lock: .shareRowExclusive, microseconds: 300_000),
        ]
        let estimates = RehearsalAnalysis.estimates(observations, table: Self.table, scale: scale)
        #expect(estimates[0].lockHeldMicroseconds == 700_000)
        #expect(!estimates[0].lockHeldScalesWithRows)
        let findings = RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: Self.table, scale: scale,
                                                  lockTimeout: .milliseconds(500), standbys: 0, replays: [], outcomes: [])
        #expect(findings.allSatisfy { $0.severity != .failure }, "\(findings)")
        #expect(findings.first?.message == "ACCESS EXCLUSIVE on public.orders for 700ms on the copy, longer than the lock timeout of 500ms, "
                + "though it changes the catalog only, whatever the table's size: the server was busy; "
                + "the table will be unavailable: reads and writes wait while it is held")
    }

    @Test func theWALAStandbyWillReplaySaysHowMuchOfItWasMeasuredServerWide() {
        let scale = RehearsalAnalysis.Scale(sampleRows: 10, tableRows: 10, tableBytes: 8192)
        func standbyMessage(_ observations: [StatementObservation]) -> String? {
            let estimates = RehearsalAnalysis.estimates(observations, table: Self.table, scale: scale)
            return RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: Self.table, scale: scale,
                                              lockTimeout: .seconds(1), standbys: 2, replays: [], outcomes: [])
                .first { $0.step == "all steps" }?.message
        }
        let own = Self.observation("CREATE INDEX CONCURRENTLY i ON orders (a)", transaction: 1, lock: nil, microseconds: 10, wal: 3072,
                                   inTransaction: false, walScope: .session)
        let during = Self.observation("ALTER TABLE orders ADD COLUMN c int", transaction: 2, lock: .accessExclusive, microseconds: 10, wal: 1024)
        #expect(standbyMessage([own]) == "each of 2 standbys will replay an estimated 3.0 kB of WAL")
        #expect(standbyMessage([during]) == "each of 2 standbys will replay an estimated 1.0 kB of WAL "
                + "(measured server-wide: other sessions' WAL during the statements is counted too)")
        #expect(standbyMessage([own, during]) == "each of 2 standbys will replay an estimated 4.0 kB of WAL "
                + "(1.0 kB of it measured server-wide: other sessions' WAL during those statements is counted too)")
    }

    @Test func anIndexBuiltUnderTheRewritesLockAndAConstraintValidatedAtOnceAreWarnedOf() {
        let scale = RehearsalAnalysis.Scale(sampleRows: 10, tableRows: 10, tableBytes: 8192)
        let observations = [
            Self.observation("ALTER TABLE orders ALTER COLUMN a TYPE bigint", transaction: 1, lock: .accessExclusive, microseconds: 10,
                             rewritten: ["public.orders", "public.orders_pkey"]),
            Self.observation("CREATE INDEX i ON orders (a)", transaction: 1, lock: nil, microseconds: 10, built: ["public.i"]),
            Self.observation("ALTER TABLE orders ADD CONSTRAINT k CHECK (a > 0)", transaction: 1, lock: nil, microseconds: 10, validated: ["k"]),
        ]
        let estimates = RehearsalAnalysis.estimates(observations, table: Self.table, scale: scale)
        let messages = RehearsalAnalysis.findings(observations: observations, estimates: estimates, table: Self.table, scale: scale,
                                                  lockTimeout: .seconds(1), standbys: 0, replays: [], outcomes: []).map(\.message)
        #expect(messages.contains { $0.hasPrefix("rewrites public.orders, public.orders_pkey: an estimated 10µs") }, "\(messages)")
        #expect(messages.contains("index public.i built without CONCURRENTLY on a table of 10 rows: writes wait for the whole build"), "\(messages)")
        #expect(messages.contains { $0.hasPrefix("constraint k added without NOT VALID: every row is read under ACCESS EXCLUSIVE") }, "\(messages)")
    }

    @Test func aStatementThatWorkedAndThenFailsOrDisagreesBreaksTheApplicationAndOneThatNeverWorkedIsNoted() {
        let statements = [
            ApplicationStatement(name: "same-value update of status", application: .legacy, sql: "UPDATE t SET status = status"),
            ApplicationStatement(name: "insert", application: .legacy, sql: "INSERT INTO t VALUES (1)"),
            ApplicationStatement(name: "read code", application: .modern, sql: "SELECT code FROM t"),
        ]
        let outcomes = [
            ReplayOutcome(statement: "same-value update of status", stage: "before expand", kind: .worked),
            ReplayOutcome(statement: "same-value update of status", stage: "after expand", kind: .failed, detail: "boom"),
            ReplayOutcome(statement: "same-value update of status", stage: "after switch modern", kind: .disagreed, detail: "code (key 1)"),
            ReplayOutcome(statement: "insert", stage: "before expand", kind: .failed, detail: "duplicate key"),
            ReplayOutcome(statement: "insert", stage: "after expand", kind: .failed, detail: "duplicate key"),
            ReplayOutcome(statement: "read code", stage: "before expand", kind: .skipped),
            ReplayOutcome(statement: "read code", stage: "after expand", kind: .worked),
        ]
        let findings = RehearsalAnalysis.replayFindings(statements, outcomes)
        #expect(findings.map(\.severity) == [.failure, .failure, .note])
        #expect(findings[0].message == "the old application's same-value update of status worked before expand and fails after expand: boom")
        #expect(findings[1].message == "after the old application's same-value update of status after switch modern, the legacy and modern representations disagree in code (key 1)")
        #expect(findings[2].message.hasPrefix("the old application's insert fails on the copy before expand already, so it is not judged"))
    }

    @Test func lockModesReadFromPgLocksAndOrderByStrength() {
        #expect(LockMode(pgLocksMode: "ShareUpdateExclusiveLock") == .shareUpdateExclusive)
        #expect(LockMode(pgLocksMode: "ExclusiveLock") == .exclusive)
        #expect(LockMode(pgLocksMode: "SIReadLock") == nil)
        #expect(LockMode.share.blocksWrites && !LockMode.share.blocksReads)
        #expect(!LockMode.shareUpdateExclusive.blocksWrites)
        #expect(LockMode.accessExclusive.blocksReads)
        #expect(LockMode.allCases.sorted() == LockMode.allCases)
    }
}
