import CutoverTestSupport
import Foundation
import Testing

/// Each plan of `examples/` rolls back from every phase before contract while the old
/// application writes all the while: after expand; after switch modern; after backfill. Each
/// time no row is lost (the old writer's rows, and the new writer's in their legacy form), the
/// table is back to the shape it had before expand, and expand can run again.
@Suite("Every example plan's rollbacks under a live old writer")
struct ExampleRollbackTests {
    @Test(.timeLimit(.minutes(3)), arguments: ExampleWorkload.all)
    func rollbackFromEveryPhase(_ workload: ExampleWorkload) async throws {
        let example = try await ExampleDatabase.make(workload)
        try await example.phase("init")
        let before = try await example.lines(workload.shape)
        let legacy = try example.startLegacyWriter()
        var modernTransactions = 0

        // From expanded.
        try await example.phase("expand")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after expand")
        try await example.expectAgreement("after expand")
        try await example.phase("rollback", "expand")
        try await expectBaseline(example, shape: before, modernTransactions: modernTransactions, "expand, rollback expand")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after rollback expand")

        // From the modern writer, then from backfilled: back to the legacy writer, then to baseline.
        for backfills in [false, true] {
            let path = backfills ? "expand, switch, backfill" : "expand, switch"
            try await example.phase("expand")
            let modern = try example.startModernWriter(updatingSeeds: true)
            try await example.phase("switch", "modern", "--force-readers")
            try await example.expectWrites(by: modern, from: "modern_keys", "\(path): after switch")
            if backfills {
                try await example.phase("backfill")
                try await example.expectWrites(by: legacy, from: "legacy_keys", "\(path): after backfill")
            }
            try await example.expectAgreement("\(path)", allConverted: backfills)
            try await example.phase("rollback", "switch")
            try await example.expectWrites(by: modern, from: "modern_keys", "\(path): after rollback switch")
            try await example.expectAgreement("\(path), rollback switch", allConverted: backfills)
            modernTransactions += try await modern.stopExpectingNoError("\(path)")
            try await example.phase("rollback", "expand")
            try await expectBaseline(example, shape: before, modernTransactions: modernTransactions, "\(path), rollbacks")
            try await example.expectWrites(by: legacy, from: "legacy_keys", "\(path): after rollback expand")
        }

        // The cycle starts again.
        try await example.phase("expand")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "expanded again")
        try await example.expectAgreement("expanded again")
        try await legacy.stopExpectingNoError("through three rollbacks")
        try await example.expectLegacyRowsKept("after three rollbacks")
    }

    /// Back at baseline: the same shape as before expand, and every row the new writer
    /// inserted still there with the legacy values its key says.
    private func expectBaseline(_ example: ExampleDatabase, shape before: [String], modernTransactions: Int,
                                _ context: String) async throws {
        let phase = try await example.lines("SELECT phase FROM cutover.migration_state")
        #expect(phase == ["baseline"], "\(example.workload.folder) \(context): phase \(phase)")
        let shape = try await example.lines(example.workload.shape)
        #expect(shape == before, "\(example.workload.folder) \(context): the table's shape differs from before expand")
        let modernRows = try await example.integers(example.workload.modernRowsRolledBack)
        #expect(modernRows[0] >= Int64(modernTransactions) && modernRows[1] == 0,
                "\(example.workload.folder) \(context): \(modernRows[0]) rows of the new writer (\(modernTransactions) transactions), \(modernRows[1]) of them wrong")
    }
}
