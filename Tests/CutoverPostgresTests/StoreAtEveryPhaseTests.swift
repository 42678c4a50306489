import Cutover
import CutoverPostgres
import CutoverTestSupport
import Testing

/// The store while the phase runner moves the drafts plan along: the built-in declarative one
/// and, where noted, the format-1 plan of SQL files it replaced.
@Suite("The store at every phase")
struct StoreAtEveryPhaseTests {
    @Test(.timeLimit(.minutes(3)), arguments: MigrationPhase.allCases, DraftsPlan.allCases)
    func eachWriterWorksExactlyWhileItsFormatIsStored(phase: MigrationPhase, plan: DraftsPlan) async throws {
        let db = try await StoreDatabase.make("store_phase_\(phase)_\(plan.rawValue)", phase: phase, plan: plan)
        let legacy = LegacyDraftAdapter(storage: db.store)
        let modern = ModernDraftAdapter(storage: db.store)
        let legacySave = SaveDraft(operationScope: "t", operationID: "legacy", draftID: "l", expectedRevision: 0,
                                   content: DraftContent(title: "Legacy"))
        let modernSave = SaveDraft(operationScope: "t", operationID: "modern", draftID: "m", expectedRevision: 0,
                                   content: DraftContent(title: "Modern", body: "Body", tags: ["x"]))
        if phase.hasV1Representation {
            #expect(try await legacy.save(legacySave).revision == 1)
            #expect(try await db.store.read(id: "l")?.content == DraftContent(title: "Legacy"))
        } else {
            await #expect(throws: DraftStoreError.formatNotStored(
                "the legacy format is no longer stored (contract removed it); save through the modern writer")) {
                try await legacy.save(legacySave)
            }
        }
        if phase.hasV2Representation {
            #expect(try await modern.save(modernSave).revision == 1)
            #expect(try await db.store.read(id: "m")?.content == modernSave.content)
            #expect(try await db.store.draft(id: "m")?.encoded.format == .v2)
        } else {
            await #expect(throws: DraftStoreError.formatNotStored(
                "the modern format is not stored yet (run expand first); save through the legacy writer")) {
                try await modern.save(modernSave)
            }
        }
        await db.close()
    }

    @Test(.timeLimit(.minutes(3)), arguments: [MigrationPhase.modern, .backfilled], DraftWritingContract.allCases)
    func theContractHoldsWhileBothPathsAreOpen(phase: MigrationPhase, contract: DraftWritingContract) async throws {
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("contract_\(phase)_\(contract.rawValue)", phase: phase)
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }

    /// The same on a table the format-1 plan took through backfill.
    @Test(.timeLimit(.minutes(3)), arguments: DraftWritingContract.allCases)
    func theContractHoldsAfterTheFormatOnePlansBackfill(contract: DraftWritingContract) async throws {
        var made: StoreDatabase?
        try await contract.verify {
            let database = try await StoreDatabase.make("contract_format1_\(contract.rawValue)", phase: .backfilled, plan: .formatOne)
            made = database
            return PostgresContractSubject(database: database)
        }
        await made?.close()
    }
}
