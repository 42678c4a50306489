import Cutover
import Foundation
import Synchronization

/// Clients that save records through a writer concurrently, each its own records in turn, and
/// time every save.
///
/// Each save is the next revision of one of the client's records, with the record's key as the
/// operation scope and the expected revision as the operation ID, so that every save is a new
/// operation that commits. The records must exist at the revisions the clients start from.
struct SaveLoad: Sendable {
    /// One client's records (their keys as text), the revision each is at, and which it saves next.
    struct Client: Sendable {
        var draftIDs: [String]
        var revisions: [Int64]
        var next = 0

        init(draftIDs: [String], revision: Int64 = 1) {
            self.draftIDs = draftIDs
            revisions = Array(repeating: revision, count: draftIDs.count)
        }
    }

    /// What a run did.
    struct Result: Sendable {
        var saves = 0
        var errors = 0
        var firstError: String?
        var latencies = Latencies()
        var elapsed: Duration = .zero

        var savesPerSecond: Double { elapsed > .zero ? Double(saves) / elapsed.seconds : 0 }
    }

    /// One save of the record `key` at `revision`, the client's `sequence`th: the revision it
    /// committed or replayed, and whether it committed.
    typealias Save = @Sendable (_ key: String, _ revision: Int64, _ sequence: Int) async throws
        -> (revision: Int64, isCommitted: Bool)

    let save: Save
    var clients: [Client]
    /// Where the clients run between their awaits; nil for Swift's cooperative threads.
    var executor: (any TaskExecutor)? = nil

    /// Clients saving through `save`.
    init(clients: [Client], executor: (any TaskExecutor)? = nil, save: @escaping Save) {
        self.save = save
        self.clients = clients
        self.executor = executor
    }

    /// Clients saving `content` to drafts through a drafts writer.
    init(writer: any ReportingDraftWriting, content: DraftContent, clients: [Client], executor: (any TaskExecutor)? = nil) {
        self.init(clients: clients, executor: executor) { draftID, revision, _ in
            let saved = try await writer.saveReportingOutcome(SaveDraft(
                operationScope: draftID, operationID: String(revision), draftID: draftID, expectedRevision: revision,
                content: content))
            if case .committed = saved { return (saved.saved.revision, true) }
            return (saved.saved.revision, false)
        }
    }

    /// Clients saving records of `Writer.Entity` through `writer`, the content of each save made
    /// from the client's sequence number; keys are made from their text by `key`.
    init<Writer: RecordWriting>(writer: Writer, clients: [Client], executor: (any TaskExecutor)? = nil,
                                key: @escaping @Sendable (String) -> RecordKey,
                                content: @escaping @Sendable (Int) -> Writer.Entity.Content) {
        self.init(clients: clients, executor: executor) { keyText, revision, sequence in
            let saved = try await writer.saveReportingOutcome(SaveRequest<Writer.Entity>(
                operationScope: keyText, operationID: String(revision), key: key(keyText), expectedRevision: revision,
                content: content(sequence)))
            return (saved.saved.revision, saved.outcome == .committed)
        }
    }

    /// Saves until `deadline` or until `stop` is raised, whichever comes first. With a `pace`,
    /// each client saves on average once per `pace`, at random moments (exponential gaps, as
    /// independent users arrive), not all clients in step; without one, each saves again as
    /// soon as its last save returns.
    mutating func run(until deadline: ContinuousClock.Instant, stop: StopSignal? = nil,
                      pace: Duration? = nil) async -> Result {
        let started = ContinuousClock.now
        let (save, executor) = (save, executor)
        let finished = await withTaskGroup(of: (Int, Client, Result).self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask(executorPreference: executor) {
                    var client = client
                    let result = await Self.run(&client, save: save, deadline: deadline, stop: stop, pace: pace)
                    return (index, client, result)
                }
            }
            var results: [(Int, Client, Result)] = []
            for await result in group { results.append(result) }
            return results
        }
        var total = Result()
        for (index, client, result) in finished {
            clients[index] = client
            total.saves += result.saves
            total.errors += result.errors
            total.firstError = total.firstError ?? result.firstError
            total.latencies.append(result.latencies)
        }
        total.elapsed = ContinuousClock.now - started
        return total
    }

    private static func run(_ client: inout Client, save: Save, deadline: ContinuousClock.Instant, stop: StopSignal?,
                            pace: Duration?) async -> Result {
        var result = Result()
        var milliseconds: [Double] = []
        milliseconds.reserveCapacity(4096)
        var due = ContinuousClock.now
        while ContinuousClock.now < deadline && stop?.isRaised != true {
            let sequence = client.next
            let slot = sequence % client.draftIDs.count
            client.next += 1
            let draftID = client.draftIDs[slot]
            let revision = client.revisions[slot]
            let began = ContinuousClock.now
            do {
                let saved = try await save(draftID, revision, sequence)
                milliseconds.append((ContinuousClock.now - began).milliseconds)
                client.revisions[slot] = saved.revision
                if saved.isCommitted {
                    result.saves += 1
                } else {
                    // Every save here is a new operation: a replay means the ledger still held it.
                    result.errors += 1
                    result.firstError = result.firstError ?? "\(draftID) was replayed, not committed"
                }
            } catch {
                // A failed attempt's wait counts too: a live user waited that long for nothing.
                milliseconds.append((ContinuousClock.now - began).milliseconds)
                result.errors += 1
                result.firstError = result.firstError ?? "\(error)"
                // Another writer moved the draft (or a save's outcome is unknown): take the
                // revision the store reports and go on.
                if case SaveFailure.conflict(_, let current) = error { client.revisions[slot] = current }
            }
            if let pace {
                // Clients saving in step would commit together every time and measure one
                // burst's queue, and any periodic work beside them (a backfill's batches) could
                // fall into or out of step with them by chance.
                due += pace * -Foundation.log(Double.random(in: Double.leastNonzeroMagnitude...1))
                let now = ContinuousClock.now
                if due > now { try? await Task.sleep(until: due, clock: .continuous) } else { due = now }
            }
        }
        result.latencies = Latencies(milliseconds: milliseconds)
        return result
    }
}

/// A flag one task raises to stop others.
final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
