import Cutover
import Testing

extension ContractRig {
    /// 100 concurrent saves with distinct operation IDs at one expected revision: one commits, 99 conflict.
    func verifyConcurrentSavesCommitOnce() async throws {
        try await seedOriginal()
        let requests = (0..<100).map { request("edit-\($0)", expected: 1, title: "Writer \($0)") }
        let firstAnswers = await saveConcurrently(requests)
        // A save that timed out waiting for the row (or lost its reply) is sent again with its
        // operation ID, as a caller would; the answer it comes to is what the contract judges.
        let results = try await settled(requests, firstAnswers)
        let summary = "first answers: \(Self.tally(firstAnswers)); after retries: \(Self.tally(results))"

        let winners = results.indices.filter { (try? results[$0].get()) != nil }
        #expect(winners.count == 1, "\(summary)")
        let conflicts = results.filter { result in
            guard case .failure(let error) = result else { return false }
            return error as? SaveFailure == .conflict(expected: 1, current: 2)
        }
        #expect(conflicts.count == 99, "\(summary)")
        #expect(try await commits() == 1, "\(summary)")
        let winner = try #require(winners.first)
        try await expectStored(revision: 2, requests[winner].content)
    }

    /// Expected 0 creates; 0 on an existing draft and a stale revision conflict; above 0 on a missing
    /// draft is notFound. None of these failures uses up its operation ID.
    func verifyRevisionRules() async throws {
        let create = request("create-1", expected: 0, title: "New")
        #expect(try await router.saveReportingOutcome(create) == .committed(
            SavedDraft(draftID: Self.draftID, content: create.content, revision: 1)))

        await expectFailure(.conflict(expected: 0, current: 1), saving: request("create-2", expected: 0, title: "Again"))
        let stale = request("edit-1", expected: 3, title: "Stale")
        await expectFailure(.conflict(expected: 3, current: 1), saving: stale)
        let missing = request("edit-2", expected: 5, title: "Missing", draftID: "draft-missing")
        await expectFailure(.notFound, saving: missing)
        #expect(try await commits() == 1)
        #expect(try await read("draft-missing") == nil)

        var corrected = stale
        corrected.expectedRevision = 1
        #expect(try await router.saveReportingOutcome(corrected).outcome == .committed)
        var created = missing
        created.expectedRevision = 0
        #expect(try await router.saveReportingOutcome(created).outcome == .committed)
        #expect(try await commits() == 3)
        try await expectStored(revision: 2, corrected.content)
        try await expectStored("draft-missing", revision: 1, created.content)
    }

    /// A draft at revision Int64.max cannot be saved on either path; nothing commits and nothing changes.
    func verifyExhaustedAtMaximumRevision() async throws {
        let content = DraftContent(title: "Full", body: "Body", tags: ["max"])
        try await seed(Self.draftID, revision: .max, DraftCodecV2().encode(content))

        for path in SavePath.allCases {
            await router.use(path)
            await expectFailure(.exhausted, saving: request("edit-\(path)", expected: .max, title: "One more"))
            await expectFailure(
                .conflict(expected: .max - 1, current: .max),
                saving: request("stale-\(path)", expected: .max - 1, title: "Stale"))
        }
        await expectFailure(.exhausted, saving: request("edit-legacy", expected: .max, title: "One more"))

        #expect(try await commits() == 0)
        try await expectStored(revision: .max, content)
        let counts = await router.counts
        #expect(counts.count(of: .exhausted, on: .legacy) == 1)
        #expect(counts.count(of: .exhausted, on: .modern) == 2)
    }
}
