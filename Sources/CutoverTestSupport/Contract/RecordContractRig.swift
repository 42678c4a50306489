import Cutover
import Testing

/// One subject of the record contract suite with both adapters and a router over its store.
struct RecordContractRig<Subject: RecordWritingContractSubject> {
    typealias Entity = Subject.Entity

    let subject: Subject
    let legacy: RecordAdapter<Subject.Storage>
    let modern: RecordAdapter<Subject.Storage>
    let router: RecordRouter<Entity>

    init(subject: Subject) {
        self.subject = subject
        legacy = RecordAdapter(storage: subject.storage, path: .legacy)
        modern = RecordAdapter(storage: subject.storage, path: .modern)
        router = RecordRouter(legacy: legacy, modern: modern)
    }

    var first: Entity.Content { Entity.sampleContents[0] }
    var second: Entity.Content { Entity.sampleContents[1] }

    func request(
        scope: String = "scope-1", _ operationID: String, key: Int = 0, expecting revision: Int64,
        _ content: Entity.Content? = nil
    ) -> SaveRequest<Entity> {
        SaveRequest(operationScope: scope, operationID: operationID, key: Entity.sampleKey(key),
                    expectedRevision: revision, content: content ?? first)
    }

    /// The failure `body` throws, or nil (recorded as an issue) when it does not throw one.
    func failure(_ body: () async throws -> Any) async throws -> SaveFailure? {
        do {
            _ = try await body()
            Issue.record("the save succeeded where the contract requires a failure")
            return nil
        } catch let failure as SaveFailure {
            return failure
        }
    }

    func verifyRetryAcrossCutover() async throws {
        let create = request("create", expecting: 0)
        let committed = try await router.saveReportingOutcome(create)
        #expect(committed == .committed(SavedRecord(key: create.key, content: first, revision: 1)))
        await router.use(.modern)
        let retried = try await router.saveReportingOutcome(create)
        #expect(retried == .replayed(committed.saved))
        let stale = try await failure { try await router.save(request("stale", expecting: 0, second)) }
        #expect(stale == .conflict(expected: 0, current: 1))
        #expect(try await subject.commitCount() == 1)
        let counts = await router.counts
        #expect(counts.count(of: .committed, on: .legacy) == 1)
        #expect(counts.count(of: .replayed, on: .modern) == 1)
        #expect(counts.count(of: .conflict, on: .modern) == 1)
    }

    func verifyReusedOperationIDConflicts() async throws {
        _ = try await modern.save(request("op", expecting: 0))
        let reused = try await failure { try await legacy.save(request("op", expecting: 0, second)) }
        #expect(reused == .operationConflict)
        let moved = try await failure { try await modern.save(request("op", key: 1, expecting: 0)) }
        #expect(moved == .operationConflict)
        #expect(try await subject.commitCount() == 1)
        #expect(try await subject.storedRecord(Entity.sampleKey(1)) == nil)
    }

    func verifyOperationIDsAreScoped() async throws {
        _ = try await modern.save(request(scope: "scope-1", "op", expecting: 0))
        let other = try await modern.saveReportingOutcome(request(scope: "scope-2", "op", expecting: 1, second))
        #expect(other.outcome == .committed)
        #expect(other.saved.revision == 2)
        #expect(try await subject.commitCount() == 2)
    }

    func verifyKeysNameDistinctRecords() async throws {
        let one = try await modern.save(request("one", key: 0, expecting: 0, first))
        let other = try await modern.save(request("other", key: 1, expecting: 0, second))
        #expect(one.revision == 1)
        #expect(other.revision == 1)
        for (key, content) in [(0, first), (1, second)] {
            let stored = try #require(try await subject.storedRecord(Entity.sampleKey(key)))
            #expect(try Entity.modern.decode(stored.columns) == content, "key \(Entity.sampleKey(key))")
        }
        #expect(try await subject.commitCount() == 2)
    }

    func verifyConcurrentSavesCommitOnce() async throws {
        let outcomes = await withTaskGroup(of: SaveOutcome.self) { group in
            for index in 0..<32 {
                let writer: RecordAdapter<Subject.Storage> = index.isMultiple(of: 2) ? legacy : modern
                let save = request("racer-\(index)", expecting: 0, index.isMultiple(of: 2) ? first : second)
                group.addTask {
                    do {
                        return try await writer.saveReportingOutcome(save).outcome
                    } catch {
                        return (error as? SaveFailure)?.outcome ?? .outcomeUnknown
                    }
                }
            }
            return await group.reduce(into: [SaveOutcome: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes == [.committed: 1, .conflict: 31])
        #expect(try await subject.commitCount() == 1)
        #expect(try await subject.storedRecord(Entity.sampleKey(0))?.revision == 1)
    }

    func verifyConcurrentRetriesCommitOnce() async throws {
        let save = request("retried", expecting: 0)
        let results = try await withThrowingTaskGroup(of: SavedRecord<Entity>.self) { group in
            for index in 0..<32 {
                let writer: RecordAdapter<Subject.Storage> = index.isMultiple(of: 2) ? legacy : modern
                group.addTask { try await writer.save(save) }
            }
            return try await group.reduce(into: Set<SavedRecord<Entity>>()) { $0.insert($1) }
        }
        #expect(results == [SavedRecord(key: save.key, content: first, revision: 1)])
        #expect(try await subject.commitCount() == 1)
    }

    func verifyRevisionRules() async throws {
        let missing = try await failure { try await modern.save(request("op", expecting: 5)) }
        #expect(missing == .notFound)
        _ = try await modern.save(request("op", expecting: 0))
        let behind = try await failure { try await legacy.save(request("late", expecting: 0, second)) }
        #expect(behind == .conflict(expected: 0, current: 1))
        let ahead = try await failure { try await legacy.save(request("late", expecting: 7, second)) }
        #expect(ahead == .conflict(expected: 7, current: 1))
        let next = try await legacy.save(request("late", expecting: 1, second))
        #expect(next.revision == 2)
        #expect(try await subject.commitCount() == 2)
        #expect(try await subject.storedRecord(Entity.sampleKey(0))?.revision == 2)
    }

    func verifyExhaustedAtMaximumRevision() async throws {
        let key = Entity.sampleKey(0)
        try await subject.seed(StoredRecord(key: key, revision: .max, columns: Entity.legacy.encode(first)))
        for writer in [legacy, modern] {
            let exhausted = try await failure { try await writer.save(request("max", expecting: .max, second)) }
            #expect(exhausted == .exhausted)
        }
        #expect(try await subject.commitCount() == 0)
        #expect(try await subject.storedRecord(key)?.revision == .max)
    }

    func verifyInvalidRequestsCommitNothing() async throws {
        var emptyScope = request("op", expecting: 0)
        emptyScope.operationScope = ""
        var longID = request("op", expecting: 0)
        longID.operationID = String(repeating: "o", count: SaveLimits.operationIDLength.upperBound + 1)
        var negative = request("op", expecting: 0)
        negative.expectedRevision = -1
        var noKey = request("op", expecting: 0)
        noKey.key = RecordKey(parts: [])
        let table: [(SaveRequest<Entity>, SaveViolation)] = [
            (emptyScope, .empty(.operationScope)),
            (longID, .tooLong(.operationID, maximum: SaveLimits.operationIDLength.upperBound)),
            (negative, .negativeExpectedRevision),
            (noKey, .keyShape(expected: Entity.keyColumns.count)),
        ]
        for (invalid, violation) in table {
            let refused = try await failure { try await modern.save(invalid) }
            #expect(refused == .invalid(violation))
        }
        #expect(try await subject.commitCount() == 0)
        // Nothing was claimed: the operation ID commits now.
        #expect(try await modern.save(request("op", expecting: 0)).revision == 1)
    }

    func verifyFormatsSurviveBothWriters() async throws {
        let key = Entity.sampleKey(0)
        _ = try await legacy.save(request("old", expecting: 0, first))
        let afterLegacy = try #require(try await subject.storedRecord(key))
        #expect(try Entity.legacy.decode(afterLegacy.columns) == first)
        _ = try await modern.save(request("new", expecting: 1, second))
        let afterModern = try #require(try await subject.storedRecord(key))
        #expect(try Entity.modern.decode(afterModern.columns) == second)
        if subject.synchronizesFormats {
            // Both formats say what the last write said, whichever path wrote it.
            #expect(try Entity.modern.decode(afterLegacy.columns) == first)
            #expect(try Entity.legacy.decode(afterModern.columns) == second)
        } else {
            for column in Entity.legacy.columns where !Entity.modern.columns.contains(column) {
                #expect(afterModern.columns[column] == afterLegacy.columns[column], "legacy column \(column)")
            }
        }
    }
}
