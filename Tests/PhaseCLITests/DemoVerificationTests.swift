import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
@testable import PhaseCLI
import PostgresClient
import Testing

/// The oracle that judges `phase demo` and `phase soak` (``DemoVerification``), judged itself:
/// real saves through the store pass it, and each kind of broken data fails exactly the
/// invariant meant to catch it.
@Suite("The demo's and the soak's oracle")
struct DemoVerificationTests {
    /// Seeded drafts; the saves edit the first three.
    private static let seeded = 5

    /// A database after expand, with three saves made through the real store, each told to
    /// the fleet ledger as the demo's instances tell it.
    private struct JudgedRun: Sendable {
        let database: TestDatabase
        let ledger = FleetLedger()

        static func make(_ label: String) async throws -> JudgedRun {
            let run = JudgedRun(database: try await TestPostgres.database(label))
            let database = run.database
            try await onThread {
                let connection = try database.connect()
                try DemoData.createLegacyTable(rows: DemoVerificationTests.seeded, on: connection)
                let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(), options: .init(forceReaders: true))
                try runner.initialize()
                try runner.run(.expand)
            }
            let pool = PostgresPool(configuration: database.configuration(), maximumConnections: 2)
            let store = try await PostgresDraftStore(pool: pool)
            let writer = ModernDraftAdapter(storage: store)
            for number in 1...3 {
                let request = SaveDraft(operationScope: "oracle", operationID: "op-\(number)", draftID: DemoData.draftID(number),
                                        expectedRevision: 1, content: DraftContent(title: "Edited \(number)"))
                run.ledger.acknowledge(request, revision: try await writer.save(request).revision)
            }
            try await store.outcomes.close()
            await pool.shutdown()
            return run
        }

        /// Changes the data behind the oracle's back.
        func tamper(_ sql: String) async throws {
            let database = database
            try await onThread { try database.connect().execute(unsafeSQL: sql) }
        }

        /// The data invariants, by name.
        func verdict(drill: Bool = false) async throws -> [String: DemoInvariant] {
            let (database, ledger) = (database, ledger)
            let invariants = try await onThread {
                try DemoVerification.verifyData(ledger, seededDrafts: DemoVerificationTests.seeded, drill: drill, contracted: false,
                                                on: database.connect())
            }
            return Dictionary(invariants.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private static let dataInvariants: Set = ["every acknowledged save present exactly once", "ledger entries equal commits",
                                             "revision chains without gaps"]

    /// The names of the invariants that do not hold.
    private func failing(_ verdict: [String: DemoInvariant]) -> Set<String> {
        Set(verdict.values.filter { !$0.holds }.map(\.name))
    }

    @Test func realSavesHoldEveryDataInvariant() async throws {
        let run = try await JudgedRun.make("oracle_intact")
        let verdict = try await run.verdict()
        #expect(Set(verdict.keys) == Self.dataInvariants)
        #expect(failing(verdict).isEmpty, "\(verdict.values.map(\.detail))")
        #expect(verdict["ledger entries equal commits"]?.detail == "3 ledger entries, 3 commits acknowledged")
    }

    @Test func anAcknowledgedSaveTheDatabaseLacksFails() async throws {
        let run = try await JudgedRun.make("oracle_missing")
        // The application was told this save committed; the database never got it.
        run.ledger.acknowledge(SaveDraft(operationScope: "oracle", operationID: "op-4", draftID: DemoData.draftID(4),
                                         expectedRevision: 1, content: DraftContent(title: "Never stored")), revision: 2)
        let verdict = try await run.verdict()
        #expect(failing(verdict) == ["every acknowledged save present exactly once", "ledger entries equal commits"])
        #expect(verdict["every acknowledged save present exactly once"]?.detail == "4 acknowledged, 1 missing or different in the ledger")
    }

    /// Data changed behind the oracle's back, and what it must then say.
    struct Tampering: Sendable, CustomTestStringConvertible {
        /// What the change stands for.
        var meaning: String
        var sql: String
        /// The invariants that must fail, and no others.
        var failing: Set<String>
        /// What some of them must say, by name.
        var details: [String: String] = [:]

        var testDescription: String { meaning }
    }

    static let tamperings = [
        // op-1 applied a second time under an operation ID the ledger did not recognise as
        // the same request: one more entry and one more revision than the fleet was told of.
        Tampering(meaning: "a save committed twice", sql: """
            INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path)
            SELECT scope, operation_id || '-again', fingerprint, draft_id, revision + 1, path
              FROM cutover.operation_ledger WHERE operation_id = 'op-1';
            UPDATE drafts SET revision = revision + 1 WHERE id = '\(DemoData.draftID(1))';
            """, failing: ["ledger entries equal commits"],
                  details: ["ledger entries equal commits": "4 ledger entries, 3 commits acknowledged"]),
        // Two entries claim revision 2 of draft 1, and the draft counts both writes.
        Tampering(meaning: "a revision used twice", sql: """
            INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path)
            SELECT scope, operation_id || '-twin', fingerprint, draft_id, revision, path
              FROM cutover.operation_ledger WHERE operation_id = 'op-1';
            UPDATE drafts SET revision = 3 WHERE id = '\(DemoData.draftID(1))';
            """, failing: ["ledger entries equal commits", "revision chains without gaps"],
                  details: ["revision chains without gaps": "1 drafts off: \(DemoData.draftID(1))"]),
        // Draft 3 skipped a revision: nobody the fleet knows of wrote revision 3.
        Tampering(meaning: "a revision gap", sql: "UPDATE drafts SET revision = revision + 1 WHERE id = '\(DemoData.draftID(3))'",
                  failing: ["revision chains without gaps"],
                  details: ["revision chains without gaps": "1 drafts off: \(DemoData.draftID(3))"]),
        // The ledger holds op-2 as a write of revision 3 where the application was told 2.
        Tampering(meaning: "a save stored with another revision than acknowledged", sql: """
            UPDATE cutover.operation_ledger SET revision = 3 WHERE operation_id = 'op-2';
            UPDATE drafts SET revision = 3 WHERE id = '\(DemoData.draftID(2))';
            """, failing: ["every acknowledged save present exactly once", "revision chains without gaps"]),
        Tampering(meaning: "a draft nobody wrote", sql: "INSERT INTO drafts (id, title, revision) VALUES ('stray', 'Nobody', 1)",
                  failing: ["revision chains without gaps"],
                  details: ["revision chains without gaps": "1 drafts off: row count 6 vs 5"]),
    ]

    @Test(arguments: tamperings)
    func brokenDataFailsTheInvariantMeantForIt(_ tampering: Tampering) async throws {
        let run = try await JudgedRun.make("oracle_tampered")
        try await run.tamper(tampering.sql)
        let verdict = try await run.verdict()
        #expect(failing(verdict) == tampering.failing)
        for (name, detail) in tampering.details {
            #expect(verdict[name]?.detail == detail)
        }
    }

    @Test func aDrillWithoutAcknowledgedSavesFails() async throws {
        let run = try await JudgedRun.make("oracle_drill")
        // No save was acknowledged during a drill, so the drill proves nothing.
        let verdict = try await run.verdict(drill: true)
        #expect(failing(verdict) == ["no write lost across the rollback drill"])
    }

    @Test func aRefusedSaveFailsTheLoadEvenUnderFaults() {
        let ledger = FleetLedger()
        ledger.record(LoadFailure(kind: .lost, code: "outcomeUnknown"))
        #expect(!DemoVerification.load(ledger, faultsInjected: false).holds)
        #expect(DemoVerification.load(ledger, faultsInjected: true).holds)
        ledger.record(LoadFailure(kind: .refused, code: "notFound"))
        let underFaults = DemoVerification.load(ledger, faultsInjected: true)
        #expect(!underFaults.holds)
        #expect(underFaults.detail == "1 failed saves: refused notFound 1")
    }
}
