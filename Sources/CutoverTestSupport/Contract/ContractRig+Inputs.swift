import Cutover
import Testing

extension ContractRig {
    /// Every row of ``InvalidSaveRequest/all`` fails with its violation on both paths and commits
    /// nothing; the ledger keeps no trace, so the valid request with the same operation ID then commits.
    func verifyInvalidRequestsCommitNothing() async throws {
        for path in SavePath.allCases {
            await router.use(path)
            for row in InvalidSaveRequest.all {
                await expectFailure(.invalid(row.violation), saving: row.request)
            }
        }
        #expect(try await commits() == 0)
        #expect(try await read(InvalidSaveRequest.valid.draftID) == nil)

        #expect(try await router.saveReportingOutcome(InvalidSaveRequest.valid).outcome == .committed)
        // Validation comes before the ledger: an invalid reuse of a committed ID is invalid, not a conflict.
        var emptyTitle = InvalidSaveRequest.valid
        emptyTitle.content.title = ""
        await expectFailure(.invalid(.empty(.title)), saving: emptyTitle)
        #expect(try await commits() == 1)
        #expect(await router.counts.count(of: .invalid, on: .modern) == InvalidSaveRequest.all.count + 1)
    }

    /// A modern draft keeps its body and tags through a legacy write, so rolling the writer back
    /// loses nothing; a draft the legacy writer created reads with the documented defaults.
    func verifyFormatsSurviveBothWriters() async throws {
        await router.use(.modern)
        let modernContent = DraftContent(title: "Plan", body: "Line one\nLine two", tags: ["q3", "finance"])
        _ = try await router.save(request("create", expected: 0, title: modernContent.title,
                                          body: modernContent.body, tags: modernContent.tags))
        try await expectStored(revision: 1, modernContent)
        #expect(try await subject.storedDraft(id: Self.draftID)?.encoded.format == .v2)

        await router.use(.legacy)
        let legacyEdit = request("legacy-edit", expected: 1, title: "Plan, revised", body: "ignored by v1")
        let saved = try await router.save(legacyEdit)
        #expect(saved == SavedDraft(draftID: Self.draftID, content: legacyEdit.content, revision: 2))
        var merged = modernContent
        merged.title = "Plan, revised"
        try await expectStored(revision: 2, merged)
        let stored = try #require(try await subject.storedDraft(id: Self.draftID))
        #expect(stored.encoded.format == .v2)
        let legacyView = try DraftCodecRegistry.standard.legacyRepresentation(of: stored.encoded, draftID: Self.draftID)
        #expect(legacyView == DraftCodecV1().encode(merged))

        await router.use(.modern)
        let modernEdit = request("modern-edit", expected: 2, title: "Plan, final", body: "", tags: [])
        _ = try await router.save(modernEdit)
        try await expectStored(revision: 3, modernEdit.content)

        await router.use(.legacy)
        _ = try await router.save(request("legacy-create", expected: 0, title: "Legacy only", draftID: "draft-2"))
        try await expectStored("draft-2", revision: 1, DraftContent(title: "Legacy only"))
        #expect(try await commits() == 4)
    }
}
