import Cutover
import CutoverPostgres
import PostgresClient
import Testing

/// A compiled plan's steps run by hand on one connection, as the runner would run them but
/// without its checks and records: for tests of what the generated SQL does.
struct CompiledSteps {
    let compiled: CompiledPlan
    let connection: PostgresConnection

    var plan: MigrationPlan { compiled.plan }

    /// `manifest` compiled, and its expand run on `database` with the control schema installed,
    /// after `setup` (the table and its rows); the steps run on `connection`'s session.
    static func expanded(_ manifest: String, on connection: PostgresConnection, after setup: String) throws -> CompiledSteps {
        _ = try ControlSchema.install(on: connection)
        try connection.execute(unsafeSQL: setup)
        let steps = CompiledSteps(compiled: try DeclarativePlan(manifest: Array(manifest.utf8)).compile(), connection: connection)
        try steps.run(.expand)
        return steps
    }

    /// Runs each file of `kind`'s apply (or revert) list that runs on this server.
    func run(_ kind: PlanStep.Kind, revert: Bool = false) throws {
        let step = try #require(plan.step(kind))
        let files = revert ? step.revert(onServerVersionNumber: connection.serverVersion)
            : step.apply(onServerVersionNumber: connection.serverVersion)
        for file in files { try connection.execute(unsafeSQL: compiled.fileTexts[file.path] ?? "") }
        // As the runner does with the step's last file: the plan's save function, made for the table's new columns.
        try RecordPlanRegistry.remakeSave(plan: plan.name, on: connection)
    }

    /// Runs backfill batches of `batchSize` from `cursor` (nil: from the start) until none is
    /// left, and returns the rows remaining by its count.
    @discardableResult
    func backfill(batchSize: Int32, after cursor: String? = nil) throws -> Int64 {
        let backfill = try #require(plan.step(.backfill)?.backfill)
        var cursor = cursor
        repeat {
            cursor = try batch(after: cursor, size: batchSize)
        } while cursor != nil
        return try connection.query(PostgresQuery(unsafeSQL: compiled.fileTexts[backfill.remaining.path] ?? ""))[0].decode(Int64.self, at: 0)
    }

    /// Runs one backfill batch of `size` keys after `cursor` (nil: from the start) to the end of
    /// the table, and returns its `last_key`: the next batch's cursor, nil when none remain.
    func batch(after cursor: String?, size: Int32) throws -> String? {
        let backfill = try #require(plan.step(.backfill)?.backfill)
        return try connection.query(PostgresQuery(unsafeSQL: compiled.fileTexts[backfill.batch.path] ?? "",
                                                  binds: [cursor.postgresBind, size.postgresBind, String?.none.postgresBind]))[0]
            .decode(String?.self, "last_key")
    }

    /// The names of `kind`'s inline checks that fail now, each with what it observed.
    func failingChecks(_ kind: PlanStep.Kind) throws -> [String] {
        try (plan.step(kind)?.checks ?? []).compactMap { check in
            guard case .inline(let sql) = check.query else { return nil }
            let observed = try connection.query(PostgresQuery(unsafeSQL: sql)).first?.text(at: 0)
            return check.expectation.evaluate(observed: observed) ? nil : "\(check.name): \(check.expectation.describe(observed: observed))"
        }
    }
}
