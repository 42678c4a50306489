import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Testing

/// The tables of the record store's tests, each with the declarative plan that migrates it.
enum RecordTable: String, Sendable, CaseIterable {
    /// `drafts` and the built-in plan (`sql/drafts/plan.json`), whose `revision` column the
    /// control schema registers at install.
    case drafts
    /// `examples/orders-status-code`: its schema.sql and its plan.json, plus a `revision`
    /// column that the plan adds at expand and declares.
    case orders
    /// `notes(tenant_id, id)`, a composite key, with a revision column of its own from the
    /// start, moving `body` to `body_text`.
    case tenantNotes
    /// `orders` exactly as the example has it: no revision column, so the store uses `xmin`.
    case ordersWithoutRevision
    /// `tokens(id uuid primary key, label text)`, a uuid key and no revision column, gaining `shout`.
    case tokens

    /// How far the plan has taken the table.
    enum Layout: Sendable {
        case baseline, expanded, contracted
    }

    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The folder of an example plan, `examples/<name>`.
    static func exampleFolder(_ name: String) -> String {
        root.appendingPathComponent("examples/\(name)").path
    }

    private static func file(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The statements that make the table as it was before the plan.
    func schemaSQL() throws -> String {
        switch self {
        case .drafts: try Self.file("sql/drafts/baseline.sql")
        case .orders, .ordersWithoutRevision: try Self.file("examples/orders-status-code/schema.sql")
        case .tokens: "CREATE TABLE tokens (id uuid PRIMARY KEY, label text NOT NULL)"
        case .tenantNotes: """
            CREATE TABLE notes (tenant_id bigint, id bigint, body text NOT NULL, revision bigint NOT NULL DEFAULT 1,
                                PRIMARY KEY (tenant_id, id))
            """
        }
    }

    /// The plan's manifest.
    func manifest() throws -> String {
        switch self {
        case .drafts: return try Self.file("sql/drafts/plan.json")
        case .ordersWithoutRevision: return try Self.file("examples/orders-status-code/plan.json")
        case .orders:
            let example = try Self.file("examples/orders-status-code/plan.json")
            var plan = try #require(try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])
            plan["revision"] = "revision"
            plan["operations"] = (plan["operations"] as? [Any] ?? [])
                + [["add_column": ["name": "revision", "type": "bigint", "default": "1", "notNull": true]]]
            return String(decoding: try JSONSerialization.data(withJSONObject: plan), as: UTF8.self)
        case .tokens: return """
            {"format": 2, "name": "tokens", "table": "public.tokens", "key": "id", "columns": ["label"],
             "operations": [{"add_column": {"name": "shout", "type": "text", "up": "upper(label)"}}]}
            """
        case .tenantNotes: return """
            {"format": 2, "name": "tenant-notes", "table": "public.notes", "key": ["tenant_id", "id"], "revision": "revision",
             "operations": [{"alter_column": {"from": "body", "to": {"name": "body_text", "type": "text", "notNull": true},
                                              "up": "body", "down": "body_text"}}]}
            """
        }
    }

    /// The plan, compiled.
    func compiled() throws -> CompiledPlan {
        try DeclarativePlan(manifest: Array(try manifest().utf8)).compile()
    }

    /// Makes the table, installs the control schema, registers the plan's entity as `phase
    /// init` does, and takes the table to `layout` with the plan's own steps.
    func prepare(on connection: PostgresConnection, layout: Layout) throws {
        try connection.execute(unsafeSQL: try schemaSQL())
        _ = try ControlSchema.install(on: connection)
        let compiled = try compiled()
        if self != .drafts { try RecordPlanRegistry.register(compiled.declaration, on: connection) }
        let steps = CompiledSteps(compiled: compiled, connection: connection)
        guard layout != .baseline else { return }
        // As the phase runner does, the plan's save functions are made again after each step
        // that changes the table.
        try steps.run(.expand)
        try RecordPlanRegistry.remakeSave(plan: compiled.declaration.name, on: connection)
        guard layout == .contracted else { return }
        try steps.backfill(batchSize: 100)
        try steps.run(.contract)
        try RecordPlanRegistry.remakeSave(plan: compiled.declaration.name, on: connection)
    }
}
