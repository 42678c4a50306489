import CutoverTestSupport
import Foundation
import Testing

/// Each plan of `examples/` goes through its whole cycle with `phase`, while an old application
/// (pgbench under `legacy-<example>`, plain SQL of before expand) and a new one (pgbench writing
/// the modern columns) write all the while: the old one never gets an error, the two
/// representations agree on every row at every phase, and after contract the rows equal a
/// reference the test computes from the legacy values with SQL of its own.
@Suite("Every example plan's cycle under live old and new writers")
struct ExampleCycleTests {
    @Test(.timeLimit(.minutes(3)), arguments: ExampleWorkload.all)
    func wholeCycle(_ workload: ExampleWorkload) async throws {
        let example = try await ExampleDatabase.make(workload)
        let legacy = try example.startLegacyWriter()
        try await example.phase("init")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "before expand")

        try await example.phase("expand")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after expand")
        try await example.expectAgreement("after expand")

        let modern = try example.startModernWriter(updatingSeeds: true)
        try await example.expectWrites(by: modern, from: "modern_keys", "before switch")
        try await example.phase("switch", "modern", "--force-readers")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after switch")
        try await example.expectWrites(by: modern, from: "modern_keys", "after switch")
        try await example.expectAgreement("after switch modern")

        try await example.phase("backfill")
        try await example.expectWrites(by: legacy, from: "legacy_keys", "after backfill")
        try await example.expectWrites(by: modern, from: "modern_keys", "after backfill")
        try await example.expectAgreement("after backfill", allConverted: true)

        // Contract refuses while an old application is connected, and changes nothing.
        let refused = try await example.phase("contract", "--yes", "--window", "0s", status: 3)
        #expect(refused.diagnostics.contains("legacy-\(workload.folder)"), "\(refused.diagnostics)")
        try await example.expectAgreement("after the refused contract", allConverted: true)
        let kept = try await example.integers(workload.contractedShape)
        #expect(kept == [Int64(workload.legacyColumns.count), Int64(workload.modernColumns.count)],
                "\(workload.folder): the refused contract changed the table: \(kept)")

        // The old writer has to go before contract. The new one pauses while the reference is
        // read from the legacy values, then goes on through contract with new rows only, whose
        // values follow from their keys.
        try await legacy.stopExpectingNoError("from before expand to contract")
        try await modern.stopExpectingNoError("from expand to contract")
        try await example.expectLegacyRowsKept("before contract")
        try await example.expectAgreement("before contract", allConverted: true)
        try await example.execute(workload.storeReference)

        let contracting = try example.startModernWriter(updatingSeeds: false)
        try await example.expectWrites(by: contracting, from: "modern_keys", "before contract")
        let contracted = try await example.phase("contract", "--yes", "--window", "0s")
        #expect(contracted.output.contains("contracted"), "\(contracted.output)")
        try await example.expectWrites(by: contracting, from: "modern_keys", "after contract")
        try await contracting.stopExpectingNoError("through contract")

        let wrong = try await example.integer(workload.wrongAfterContract)
        #expect(wrong == 0, "\(workload.folder): \(wrong) rows differ from the reference after contract")
        let shape = try await example.integers(workload.contractedShape)
        #expect(shape == [0, 0], "\(workload.folder): legacy columns left, modern columns nullable: \(shape)")
    }
}
