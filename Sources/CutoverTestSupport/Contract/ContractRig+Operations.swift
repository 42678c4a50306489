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
        let requests = Array(repeating: request, count: 100)
        let firstAnswers = await saveConcurrently(requests)
        let results = try await settled(requests, firstAnswers)
        let summary = "first answers: \(Self.tally(firstAnswers)); after retries: \(Self.tally(results))"

        let succeeded = results.compactMap { try? $0.get() }
        #expect(succeeded.count == 100, "\(summary)")
        #expect(succeeded.filter { $0.outcome == .committed }.count == 1, "\(summary)")
        #expect(succeeded.filter { $0.outcome == .replayed }.count == 99, "\(summary)")
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

    /// Each answer, with the saves whose answer was `outcomeUnknown` or one that committed
    /// nothing (``DraftWritingContractSubject/committedNothing(_:)``) sent again, one at a time
    /// with the same operation ID, until the answer is definite (at most 20 times each).
    func settled(_ requests: [SaveDraft], _ answers: [Result<SaveResult, any Error>]) async throws
        -> [Result<SaveResult, any Error>] {
        var results = answers
        for index in results.indices {
            var attempts = 0
            while attempts < 20, case .failure(let error) = results[index], isWorthRetrying(error) {
                attempts += 1
                do {
                    results[index] = .success(try await router.saveReportingOutcome(requests[index]))
                } catch {
                    results[index] = .failure(error)
                }
            }
        }
        return results
    }

    private func isWorthRetrying(_ error: any Error) -> Bool {
        error as? SaveFailure == .outcomeUnknown || subject.committedNothing(error)
    }

    /// How many answers of each kind, for a failed expectation to show what did happen.
    static func tally(_ results: [Result<SaveResult, any Error>]) -> String {
        var counts: [String: Int] = [:]
        for result in results {
            let kind = switch result {
            case .success(let saved): "\(saved.outcome)"
            case .failure(let error): "\(error)"
            }
            counts[kind, default: 0] += 1
        }
        return counts.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
    }
}
