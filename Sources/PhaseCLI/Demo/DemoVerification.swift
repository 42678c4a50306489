import CutoverPostgres
import Foundation
import PostgresClient

/// One invariant the demo checks at its end.
struct DemoInvariant: Sendable {
    var name: String
    var holds: Bool
    var detail: String
}

/// The invariants of a migration that lost nothing and did nothing twice, checked against the
/// database and the fleet's own record of what it was told; and of a fleet that followed every
/// switch and whose saves did not fail.
///
/// It is the verdict of `phase demo` and `phase soak`, both commands an operator runs, so it
/// lives with them in `PhaseCLI` rather than in a development executable or a test module: an
/// exit status of 0 from either means this oracle found every invariant held. Its own tests
/// (`DemoVerificationTests`) feed it real saves and then broken data (an acknowledged save the
/// database lacks, a save committed twice, a revision gap) and expect it to fail.
enum DemoVerification {
    /// Every invariant of a run.
    ///
    /// - Parameters:
    ///   - following: what the fleet did after each change of the plan's state.
    ///   - faultsInjected: whether faults were injected on purpose, so that attempts lost to
    ///     them (and retried to an answer) are expected.
    static func verify(_ ledger: FleetLedger, following: SwitchFollowing, seededDrafts: Int, drill: Bool = true,
                       contracted: Bool = true, faultsInjected: Bool, on connection: PostgresConnection) throws -> [DemoInvariant] {
        try verifyData(ledger, seededDrafts: seededDrafts, drill: drill, contracted: contracted, on: connection)
            + [load(ledger, faultsInjected: faultsInjected), following.invariant]
    }

    /// The invariant on the load's own failures: none at all in a run without faults; in a run
    /// with faults, none but attempts that got no answer and were retried until one came.
    static func load(_ ledger: FleetLedger, faultsInjected: Bool) -> DemoInvariant {
        let failures = ledger.failures
        let counted = { (failures: [LoadFailure: Int]) in
            failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        let conflicts = ledger.retries.conflicts
        guard faultsInjected else {
            let total = failures.values.reduce(0, +)
            return DemoInvariant(name: "no save failed", holds: total == 0,
                                 detail: total == 0 ? "every attempt was answered with a commit, a replay or a conflict (\(conflicts) conflicts re-read)"
                                     : "\(total) failed attempts: " + counted(failures))
        }
        let defects = failures.filter { $0.key.kind != .lost }
        let lost = failures.filter { $0.key.kind == .lost }.values.reduce(0, +)
        return DemoInvariant(name: "every save answered, none refused", holds: defects.isEmpty,
                             detail: defects.isEmpty ? "\(lost) attempts lost to the faults, each retried until answered"
                                 : "\(defects.values.reduce(0, +)) failed saves: " + counted(defects))
    }

    /// The invariants on the data: what the fleet was told is what the database holds.
    static func verifyData(_ ledger: FleetLedger, seededDrafts: Int, drill: Bool, contracted: Bool,
                           on connection: PostgresConnection) throws -> [DemoInvariant] {
        let acknowledged = ledger.acknowledged
        var entries: [String: (draft: String, revision: Int64)] = [:]
        for row in try connection.query("SELECT scope, operation_id, draft_id, revision FROM cutover.operation_ledger") {
            entries[try row.decode(String.self, "scope") + "\u{0}" + row.decode(String.self, "operation_id")] =
                (try row.decode(String.self, "draft_id"), try row.decode(Int64.self, "revision"))
        }
        var invariants: [DemoInvariant] = []

        let missing = acknowledged.filter { save in
            guard let entry = entries[save.scope + "\u{0}" + save.operationID] else { return true }
            return entry.draft != save.draftID || entry.revision != save.revision
        }
        invariants.append(DemoInvariant(
            name: "every acknowledged save present exactly once", holds: missing.isEmpty,
            detail: "\(acknowledged.count) acknowledged, \(missing.count) missing or different in the ledger"))

        invariants.append(DemoInvariant(
            name: "ledger entries equal commits", holds: entries.count == acknowledged.count,
            detail: "\(entries.count) ledger entries, \(acknowledged.count) commits acknowledged"))

        // Each draft's revision grew by one for every write: the store's (in the ledger) and the
        // old application's (counted as they happened), with no revision used twice.
        var storeWrites: [String: [Int64]] = [:]
        for entry in entries.values { storeWrites[entry.draft, default: []].append(entry.revision) }
        let legacyUpdates = ledger.legacyUpdates
        let inserted = Set(ledger.legacyInserts)
        var broken: [String] = []
        for row in try connection.query("SELECT id, revision FROM drafts") {
            let id = try row.decode(String.self, "id")
            let revision = try row.decode(Int64.self, "revision")
            let writes = storeWrites[id] ?? []
            let expected = 1 + Int64(writes.count) + (legacyUpdates[id] ?? 0)
            if revision != expected || Set(writes).count != writes.count { broken.append(id) }
        }
        let total = try connection.query("SELECT count(*) AS n FROM drafts")[0].decode(Int.self, "n")
        if total != seededDrafts + inserted.count { broken.append("row count \(total) vs \(seededDrafts + inserted.count)") }
        invariants.append(DemoInvariant(
            name: "revision chains without gaps", holds: broken.isEmpty,
            detail: broken.isEmpty ? "\(total) drafts, every revision accounted for"
                : "\(broken.count) drafts off: " + broken.prefix(5).joined(separator: ", ")))

        if drill {
            let during = acknowledged.filter(\.duringDrill)
            let lost = during.filter { entries[$0.scope + "\u{0}" + $0.operationID] == nil }
            invariants.append(DemoInvariant(
                name: "no write lost across the rollback drill", holds: lost.isEmpty && !during.isEmpty,
                detail: "\(during.count) saves acknowledged during the drill, \(lost.count) lost"))
        }
        guard contracted else { return invariants }

        let columns = try connection.query("""
            SELECT string_agg(attname, ',' ORDER BY attnum) AS names FROM pg_attribute
             WHERE attrelid = 'drafts'::regclass AND attnum > 0 AND NOT attisdropped
            """)[0].decode(String.self, "names")
        invariants.append(DemoInvariant(
            name: "v1 representation gone after contract", holds: !columns.split(separator: ",").contains("title"),
            detail: "drafts has columns \(columns)"))
        return invariants
    }
}
