import Cutover
import Testing

extension ContractRig {
    /// Save through legacy, switch to modern, retry the same request: same result, one commit,
    /// one call on each adapter. After the cutover a stale expected revision conflicts and commits nothing.
    func verifyRetryAcrossCutover() async throws {
        try await seedOriginal()
        let request = request("edit-1", expected: 1, title: "Revised")

        let saved = try await router.save(request)
        await router.use(.modern)
        let retried = try await router.saveReportingOutcome(request)

        #expect(retried == .replayed(saved))
        #expect(saved == SavedDraft(draftID: Self.draftID, content: request.content, revision: 2))
        #expect(try await commits() == 1)
        #expect(legacy.callCount == 1)
        #expect(modern.callCount == 1)
        let counts = await router.counts
        #expect(counts.count(of: .committed, on: .legacy) == 1)
        #expect(counts.count(of: .replayed, on: .modern) == 1)

        await expectFailure(.conflict(expected: 1, current: 2), saving: self.request("edit-2", expected: 1, title: "Stale"))
        #expect(try await commits() == 1)
        try await expectStored(revision: 2, DraftContent(title: "Revised"))
        #expect(await router.counts.count(of: .conflict, on: .modern) == 1)
    }

    /// The selected adapter holds its request; the path changes; the save is released and completes
    /// on the old path; the next save takes the new path. Then a save whose response is lost
    /// is retried and commits once.
    func verifyInFlightSaveKeepsItsPath() async throws {
        try await seedOriginal()
        let inFlight = request("edit-1", expected: 1, title: "In flight")
        await gate.holdNextCommit()
        let router = router
        let pending = Task { try await router.saveReportingOutcome(inFlight) }

        #expect(await gate.heldCommitPath() == .legacy)
        #expect(legacy.callCount == 1)
        await router.use(.modern)
        await gate.release()
        let first = try await pending.value

        #expect(first == .committed(SavedDraft(draftID: Self.draftID, content: inFlight.content, revision: 2)))
        #expect(legacy.callCount == 1)
        #expect(modern.callCount == 0)
        #expect(await router.counts.count(of: .committed, on: .legacy) == 1)

        let next = request("edit-2", expected: 2, title: "After the switch", body: "Body", tags: ["new"])
        #expect(try await router.saveReportingOutcome(next) == .committed(
            SavedDraft(draftID: Self.draftID, content: next.content, revision: 3)))
        #expect(legacy.callCount == 1)
        #expect(modern.callCount == 1)
        try await expectStored(revision: 3, next.content)

        let lost = request("edit-3", expected: 3, title: "Response lost", body: "Body", tags: ["new"])
        await lossy.loseNextResponse()
        await expectFailure(.outcomeUnknown, saving: lost)
        #expect(try await commits() == 3)
        let retried = try await router.saveReportingOutcome(lost)
        #expect(retried == .replayed(SavedDraft(draftID: Self.draftID, content: lost.content, revision: 4)))
        #expect(try await commits() == 3)
        try await expectStored(revision: 4, lost.content)

        let counts = await router.counts
        #expect(counts.calls(on: .legacy) == 1)
        #expect(counts.calls(on: .modern) == 3)
        #expect(counts.outcomes(on: .modern) == [.committed: 1, .outcomeUnknown: 1, .replayed: 1])
    }
}
