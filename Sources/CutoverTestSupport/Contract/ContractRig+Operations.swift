import Cutover
import Testing

extension ContractRig {
    /// Reusing an operation ID for any other request is operationConflict on either path and commits nothing.
    func verifyReusedOperationIDConflicts() async throws {
        try await seedOriginal()
        let first = request("edit-1", expected: 1, title: "First")
        _ = try await router.save(first)

        var otherTitle = first
        otherTitle.content.title = "Second"
        var otherBody = first
        otherBody.content.body = "A body"
        var otherRevision = first
        otherRevision.expectedRevision = 2
        var otherDraft = first
        otherDraft.draftID = "draft-2"
        otherDraft.expectedRevision = 0
        for path in SavePath.allCases {
            await router.use(path)
            for reuse in [otherTitle, otherBody, otherRevision, otherDraft] {
                await expectFailure(.operationConflict, saving: reuse)
            }
        }

        #expect(try await commits() == 1)
        try await expectStored(revision: 2, DraftContent(title: "First"))
        #expect(try await read("draft-2") == nil)
        #expect(await router.counts.count(of: .operationConflict, on: .modern) == 4)
    }

    /// The same operation ID in another scope is a new operation, even with an identical draft and content.
    func verifyOperationIDsAreScoped() async throws {
        try await seedOriginal()
        let inA = request("edit-1", expected: 1, title: "Scoped", scope: "account-a")
        let inB = request("edit-1", expected: 2, title: "Scoped", scope: "account-b")

        #expect(try await router.saveReportingOutcome(inA).outcome == .committed)
        #expect(try await router.saveReportingOutcome(inB).outcome == .committed)
        #expect(try await router.saveReportingOutcome(inA).outcome == .replayed)
        #expect(try await commits() == 2)
        try await expectStored(revision: 3, DraftContent(title: "Scoped"))
    }

    /// 100 concurrent retries of one operation: one commit, and every caller gets the same result.
    func verifyConcurrentRetriesCommitOnce() async throws {
        try await seedOriginal()
        let request = request("edit-1", expected: 1, title: "Once", body: "Only once", tags: ["retry"])
        let results = await saveConcurrently(Array(repeating: request, count: 100))

        let succeeded = results.compactMap { try? $0.get() }
        #expect(succeeded.count == 100)
        #expect(succeeded.filter { $0.outcome == .committed }.count == 1)
        #expect(succeeded.filter { $0.outcome == .replayed }.count == 99)
        let expected = SavedDraft(draftID: Self.draftID, content: request.content, revision: 2)
        #expect(succeeded.allSatisfy { $0.saved == expected })
        #expect(try await commits() == 1)
        try await expectStored(revision: 2, DraftContent(title: "Once"))
    }

    /// Sends every request through the router at once and returns each outcome in request order.
    func saveConcurrently(_ requests: [SaveDraft]) async -> [Result<SaveResult, any Error>] {
        let router = router
        return await withTaskGroup(of: (Int, Result<SaveResult, any Error>).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await router.saveReportingOutcome(request)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<SaveResult, any Error>?](repeating: nil, count: requests.count)
            for await (index, result) in group {
                results[index] = result
            }
            return results.compactMap { $0 }
        }
    }
}
