import Foundation
import Testing

/// Contract's "no legacy write within the window" cannot pass by omission: a plan whose expand
/// never recorded legacy writes is refused until it does.
@Suite(.timeLimit(.minutes(3)))
struct LegacyTrackingTests {
    @Test func aContractWhoseExpandRecordsNoLegacyWriteIsRefusedUntilItDoes() async throws {
        let (db, folder) = try await GadgetsPlan.make("untracked_legacy")
        defer { folder.remove() }
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"], ["backfill"]] {
            let run = try await db.phase(["--plan", folder.path] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
        let refused = try await db.phase("--plan", folder.path, "contract", "--yes", "--window", "0s")
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains(
            "check failed: no legacy write within the window: expected none within 0s, observed not tracked: cutover.legacy_activity has no row for gadgets"))
        #expect(try await db.phaseName(plan: "gadgets") == "backfilled")
        #expect(try await db.value(Int.self, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'gadgets'::regclass AND attname = 'label'") == 1)

        try await db.sql { try $0.execute(unsafeSQL: "INSERT INTO cutover.legacy_activity VALUES ('gadgets', '-infinity')") }
        let contracted = try await db.phase("--plan", folder.path, "contract", "--yes", "--window", "0s")
        #expect(contracted.status == 0, "\(contracted.diagnostics)")
        #expect(try await db.phaseName(plan: "gadgets") == "contracted")
    }
}
