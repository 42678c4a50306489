import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase` pointed at a real PgBouncer (Debian's 1.18) in transaction mode: the read-only
/// commands work through it, the changing ones refuse it with exit 64 and leave nothing behind.
@Suite("phase through PgBouncer", .timeLimit(.minutes(3)))
struct PhasePoolerTests {
    @Test func readOnlyCommandsWorkAndAStepIsRefusedNamingTheNeedForADirectConnection() async throws {
        let db = try await WorkflowDatabase.make("phase_pooled", rows: 20)
        #expect(try await db.phase("init").status == 0)
        let (pooler, pooled) = try await db.database.throughPgBouncer(.init(poolMode: .transaction, poolSize: 1))
        defer { pooler.stop() }
        let run = { (arguments: [String]) in try await onThread { try PhaseBinary.run(arguments, databaseURL: pooled) } }

        let status = try await run(["status"])
        #expect(status.status == 0, "\(status.diagnostics)")
        #expect(status.output.contains("phase baseline, writer legacy, epoch 0"), "\(status.output)")
        let readers = try await run(["readers"])
        #expect(readers.status == 0, "\(readers.diagnostics)")

        let expand = try await run(["expand"])
        #expect(expand.status == 64, "\(expand.diagnostics)")
        #expect(expand.diagnostics.hasPrefix("Error: the runner needs a direct or session-pooled connection"), "\(expand.diagnostics)")
        #expect(expand.diagnostics.split(separator: "\n").count == 1, "\(expand.diagnostics)")
        #expect(try await db.phaseName() == "baseline")
        let leftovers = try await onThread { try SessionLeftovers.probe(through: pooled) }
        #expect(leftovers == .none)
    }
}
