import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Synchronization
import Testing

/// The phase runner at its edges: lost replies, hostile checks, steps stopped half way, stop
/// requests, and the compare-and-set that keeps a phase change from happening twice.
@Suite("Runner edges", .timeLimit(.minutes(3)))
struct RunnerEdgeTests {
    /// A database with seeded legacy drafts and the control schema, its plan at baseline.
    private func baseline(_ label: String, rows: Int = 30) async throws -> TestDatabase {
        try await PlanFixtures.baseline(label, rows: rows)
    }

    /// The format-1 drafts plan copied to a folder, with `edit` applied to its files.
    private func planFolder(_ edit: (inout [String: String]) -> Void) throws -> String {
        try PlanFixtures.folder(edit)
    }

    private func runner(_ connection: PostgresConnection, plan folder: String? = nil, options: PhaseRunner.Options = .init(),
                        log: @escaping @Sendable (String) -> Void = { _ in }) throws -> PhaseRunner {
        var options = options
        options.forceReaders = true
        options.modernWriterWindow = .zero
        // The format-1 plan unless told: these edges are the runner's with a plan's own files.
        return PhaseRunner(connection: connection, source: try PlanSource.folder(folder ?? DraftsPlan.formatOneFolder),
                           options: options, log: log)
    }

    private func columns(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT attname FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
            """).map { try $0.decode(String.self, "attname") }
    }

    // MARK: Lost replies

    @Test("a step whose last COMMIT reply was lost is reported done when run again", arguments: [PhaseStep.expand, .contract])
    func lostReplyThenDone(step: PhaseStep) async throws {
        let database = try await baseline("edge_lost_\(step.rawValue)")
        let (proxy, proxied) = try database.throughLossyProxy()
        defer { proxy.stop() }
        try await onThread {
            let direct = try database.connect()
            let prior = try self.runner(direct)
            // The files this server runs (contract's differ before and from PostgreSQL 18): the
            // reply is lost after the one before the last.
            let files = prior.files(for: step)
            let line = "applied " + files[files.count - 2].path
            for earlier in PhaseMachine.forwardSteps.prefix(while: { $0 != step }) { try prior.run(earlier) }
            let before = try prior.state()
            // The reply to the step's last transaction, the one that changes the phase, is lost.
            let connection = try PostgresConnection(configuration: .init(connectionString: proxied, connectTimeout: TestPostgres.connectTimeout))
            let lossyPID = connection.backendPID  // libpq forgets it once the connection breaks
            let lossy = try self.runner(connection) { if $0 == line { proxy.loseNextReplyToExplicitCommit() } }
            #expect(throws: PostgresError.self) { try lossy.run(step) }
            #expect(proxy.lostReplyCount == 1)
            let after = try prior.state()
            #expect(after.phase == step.targetPhase)
            #expect(after.epoch == before.epoch + 1)
            // Retried once the server has ended the session whose client lost the reply (until
            // then the session still holds the plan's lease, as it should).
            // This connection asked for no client_connection_check_interval, so a server whose
            // side of the proxy stays open may never notice: after a bound, end it as the server
            // would (a lease whose holder is gone).
            let deadline = ContinuousClock.now + .seconds(30)
            while try direct.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(lossyPID)")[0]
                .decode(Int.self, "n") > 0 {
                if ContinuousClock.now > deadline {
                    _ = try direct.query("SELECT pg_terminate_backend(\(lossyPID)) AS ended")
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
            let again = try self.runner(try database.connect()).run(step)
            #expect(again.isAlreadyDone)
            #expect(again.epoch == after.epoch)
            #expect(again.doneBy?.epoch == after.epoch)
            #expect(try prior.state() == after)
            let history = try PhaseHistory.list(plan: "drafts", on: direct).filter { $0.step == step.name }.map(\.outcome)
            // The attempt was recorded done in the very transaction whose reply was lost.
            #expect(history == [.done, .skipped])
        }
    }

    @Test func thePhaseChangeIsACompareAndSetOnPhaseAndEpoch() async throws {
        let database = try await baseline("edge_cas")
        try await onThread {
            let connection = try database.connect()
            let first = try connection.withTransaction {
                try MigrationState.advance(plan: "drafts", from: .baseline, epoch: 0, to: .expanded, on: $0)
            }
            #expect(first == 1)
            // A second runner that read the same state changes nothing, whichever target it has.
            for target in [MigrationPhase.expanded, .baseline] {
                #expect(throws: PhaseRunnerError.stateMoved(plan: "drafts", from: .baseline, epoch: 0)) {
                    try connection.withTransaction {
                        try MigrationState.advance(plan: "drafts", from: .baseline, epoch: 0, to: target, on: $0)
                    }
                }
            }
            let state = try #require(try MigrationState.load(plan: "drafts", on: connection))
            #expect(state.phase == .expanded && state.epoch == 1)
        }
    }

    // MARK: Checks

    @Test("a check that writes, escapes its transaction, releases locks or hangs is a failed check", arguments: [
        ("deletes", "DELETE FROM drafts RETURNING 1", "in a read-only transaction"),
        ("deletes in a CTE", "WITH gone AS (DELETE FROM drafts RETURNING 1) SELECT count(*) FROM gone",
         "in a read-only transaction"),
        ("ends its transaction", "COMMIT; DELETE FROM drafts", "error: cannot insert multiple commands into a prepared statement"),
        ("takes the lease", "DELETE FROM cutover.runner_lease RETURNING 1", "in a read-only transaction"),
        ("releases advisory locks", "SELECT pg_advisory_unlock_all() IS NULL", nil),
        // Allowed in a read-only transaction, but a notification is sent only on COMMIT, and a
        // check's transaction always rolls back.
        ("notifies", "SELECT pg_notify('cutover_state', '{}') IS NULL", nil),
        ("sleeps", "SELECT pg_sleep(3600) IS NULL", "timed out after 1s"),
    ])
    func hostileChecks(name: String, sql: String, observed: String?) async throws {
        let database = try await baseline("edge_check_\(name.prefix(8))")
        let check = #"{"name": "hostile", "sql": \#(Self.jsonString(sql)), "expect": "= 42", "message": "m"}"#
        let folder = try planFolder { files in
            files["plan.json"] = files["plan.json"]!.replacing(#"{"name": "legacy table present""#,
                                                                with: check + #", {"name": "legacy table present""#)
        }
        try await onThread {
            let connection = try database.connect()
            let runner = try self.runner(connection, plan: folder, options: .init(checkTimeout: .seconds(1)))
            // Held as a running step holds it: the checks run elsewhere and cannot free it.
            try RunnerLock.acquire(plan: "drafts", on: connection)
            let outcome = try #require(try runner.checks(before: .expand, state: runner.state()).first { $0.name == "hostile" })
            #expect(!outcome.isPassed)
            if let observed { #expect(outcome.observed.contains(observed), "\(outcome.observed)") }
            #expect(try RunnerLock.holder(plan: "drafts", on: try database.connect())?.pid == connection.backendPID)
            #expect(try connection.query("SELECT count(*) AS n FROM drafts")[0].decode(Int.self, "n") == 30)
            // status runs the same checks; expand is refused by them and changes nothing.
            #expect(try runner.status().nextChecks.contains { $0.name == "hostile" && !$0.isPassed })
            try RunnerLock.release(plan: "drafts", on: connection)
            #expect(throws: StepRefusal.self) { try runner.run(.expand) }
            #expect(try self.columns(connection) == ["id", "title", "revision"])
        }
    }

    private static func jsonString(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    // MARK: Half-done steps

    @Test func anExpandThatStoppedHalfWayCanBeRolledBackOrFinished() async throws {
        let database = try await baseline("edge_half_expand")
        let failing = try planFolder { $0["expand_index.sql"] = "SELECT 1 / 0;" }
        try await onThread {
            let connection = try database.connect()
            #expect(throws: PostgresError.self) { try self.runner(connection, plan: failing).run(.expand) }
            let runner = try self.runner(connection)
            let status = try runner.status()
            #expect(status.state.phase == .baseline)
            #expect(status.halfDone == .init(stopped: .expand, step: .revertExpand, appliedFiles: ["expand.sql"]))
            #expect(status.steps.first == .init(step: .expand, state: .halfDone))
            #expect(try self.columns(connection) == ["id", "title", "revision", "document"])
            // Undo it: the column and trigger go, the phase stays baseline, nothing is left applied.
            let undone = try runner.rollback(undoing: .expand)
            #expect(!undone.isAlreadyDone && undone.from == .baseline && undone.to == .baseline)
            #expect(try self.columns(connection) == ["id", "title", "revision"])
            #expect(try runner.halfDoneStep(in: .baseline) == nil)
            #expect(try runner.rollback(undoing: .expand).isAlreadyDone)
            // And forward again, with the plan as it should be.
            #expect(try runner.run(.expand).to == .expanded)
        }
    }

    @Test func aContractStoppedBeforeItsLastFileCanBeRolledBackAndTheSwitchUndone() async throws {
        let database = try await baseline("edge_half_contract")
        let failing = try planFolder { $0["contract_validate.sql"] = "SELECT 1 / 0;" }
        try await onThread {
            let connection = try database.connect()
            // The plan whose contract fails from the start: a plan is pinned at its first step.
            let runner = try self.runner(connection, plan: failing)
            for step in [PhaseStep.expand, .switchModern, .backfill] { try runner.run(step) }
            #expect(throws: PostgresError.self) { try runner.run(.contract) }
            #expect(try runner.state().phase == .backfilled)
            let first = try #require(runner.files(for: .contract).first?.path)
            #expect(try runner.halfDoneStep(in: .backfilled)?.appliedFiles == [first])
            // The switch back is refused while contract's constraint stands, and says what to do.
            do {
                try runner.rollback(undoing: .switch)
                Issue.record("the switch back ran with contract half done")
            } catch let refusal as StepRefusal {
                #expect(refusal.failedChecks.map(\.name) == ["contract not begun"])
                #expect(refusal.failedChecks.first?.message.contains("phase rollback contract") == true)
            }
            let undone = try runner.rollback(undoing: .contract)
            #expect(undone.to == .backfilled)
            let constraints = try connection.query("""
                SELECT count(*) AS n FROM pg_constraint WHERE conrelid = 'drafts'::regclass AND conname = 'drafts_document_present'
                """)[0].decode(Int.self, "n")
            #expect(constraints == 0)
            // From PostgreSQL 18 the first file's NOT VALID constraint already made the column
            // NOT NULL in pg_attribute; the revert leaves it nullable again on every version.
            let isNotNull = try connection.query("""
                SELECT attnotnull FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attname = 'document'
                """)[0].decode(Bool.self, "attnotnull")
            #expect(!isNotNull)
            #expect(try runner.rollback(undoing: .switch).to == .expanded)
            #expect(try self.columns(connection) == ["id", "title", "revision", "document"])
        }
    }

    @Test func contractPastItsLastFileCannotBeRolledBack() async throws {
        let database = try await baseline("edge_contract_done")
        try await onThread {
            let runner = try self.runner(try database.connect())
            for step in PhaseMachine.forwardSteps { try runner.run(step) }
            for kind in [PlanStep.Kind.contract, .switch, .expand] {
                #expect(throws: StepRefusal.self) { try runner.rollback(undoing: kind) }
            }
        }
    }

    @Test func contractIsRefusedWhileAnyRowHasOnlyV1WhateverThePlansChecksSay() async throws {
        let database = try await baseline("edge_v1_only")
        // A plan whose contract has no checks of its own at all.
        let lax = try planFolder { files in
            let manifest = files["plan.json"]!
            let start = manifest.range(of: #""revert": ["contract_revert.sql"],"#)!.upperBound
            files["plan.json"] = String(manifest[..<start]) + "\n      \"checks\": []\n    }\n  ]\n}\n"
        }
        try await onThread {
            let connection = try database.connect()
            let runner = try self.runner(connection, plan: lax)
            #expect(runner.plan.step(.contract)?.checks.isEmpty == true)
            for step in [PhaseStep.expand, .switchModern, .backfill] { try runner.run(step) }
            try connection.query("UPDATE drafts SET document = NULL WHERE id = 'seed-0001'")
            do {
                try runner.run(.contract)
                Issue.record("contract ran over a v1-only row")
            } catch let refusal as StepRefusal {
                #expect(refusal.failedChecks.map(\.description) == [
                    "FAILED no v1-only rows: expected = 0, observed 1 (run backfill until it converts every row first)",
                ])
            }
            #expect(try runner.halfDoneStep(in: .backfilled) == nil)
            #expect(try runner.run(.backfill).to == .backfilled)
            #expect(try runner.run(.contract).to == .contracted)
        }
    }

    // MARK: Stop requests

    @Test func aStoppedBackfillEndsBetweenBatchesMarkedInterruptedAndResumes() async throws {
        let database = try await baseline("edge_stop_backfill", rows: 500)
        let converted = Mutex<Int64>(0)
        try await onThread {
            let connection = try database.connect()
            let prior = try self.runner(connection)
            for step in [PhaseStep.expand, .switchModern] { try prior.run(step) }
            var options = PhaseRunner.Options(backfill: .init(batchSize: 50))
            options.isStopRequested = { converted.withLock { $0 } >= 150 }
            let stopping = try self.runner(connection, options: options)
            #expect(throws: BackfillError.stopped(converted: 150)) {
                try stopping.run(.backfill) { progress in converted.withLock { $0 = progress.converted } }
            }
            let history = try #require(try PhaseHistory.list(plan: "drafts", on: connection).last)
            #expect(history.step == "backfill" && history.outcome == .interrupted)
            let state = try prior.state()
            #expect(state.phase == .modern && state.backfillConverted == 150 && state.backfillCursor != nil)
            #expect(try RunnerLock.holder(plan: "drafts", on: connection) == nil)
            let finished = try prior.run(.backfill)
            #expect(finished.to == .backfilled)
            #expect(try prior.state().backfillConverted == 500)
        }
    }
}
