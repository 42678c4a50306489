import Cutover
import PostgresClient

/// Registers a plan's entity in the control schema, so that `cutover.save_record` knows its
/// table, its key and its revision column.
///
/// `phase init` registers a declarative plan's entity; an application never needs to, and
/// cannot: only the control schema's owner (the migrator) may.
///
/// ```swift
/// try RecordPlanRegistry.register(plan, on: migratorConnection)
/// ```
public enum RecordPlanRegistry {
    /// Registers (or changes) the entity of a declarative plan: its table, its key, its
    /// ``DeclarativePlan/revision`` column (the row's `xmin` when it names none) and its
    /// ``DeclarativePlan/writerColumns``; the control schema then makes the plan's own save
    /// function for its table.
    ///
    /// - Throws: a ``PostgresError`` (SQLSTATE 22023) naming the problem when the table
    ///   exists without the key's columns, a unique index on exactly them, or with a revision
    ///   column that is not `bigint`.
    public static func register(_ plan: DeclarativePlan, on connection: PostgresConnection) throws {
        let columns = plan.writerColumns
        try register(plan: plan.name, table: plan.table.description, key: plan.key, revision: plan.revision,
                     legacyColumns: columns.legacy, modernColumns: columns.modern, on: connection)
    }

    /// Registers the entity of a declarative plan unless it is registered as the plan declares
    /// it already (registering again forgets the statements its saves had made): the phase
    /// runner does when a plan begins, so that its registration is the plan that began and
    /// not another plan of the same name that `phase init` registered after it.
    static func registerUnlessCurrent(_ plan: DeclarativePlan, on connection: PostgresConnection) throws {
        let columns = plan.writerColumns
        let isCurrent = try connection.query(PostgresQuery(unsafeSQL: """
            SELECT EXISTS (
                SELECT FROM cutover.record_plans AS e
                 WHERE e.plan = $1
                   AND e.table_name = (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class AS c
                                         JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($2))
                   AND e.key_columns = \(list(3)) AND e.revision_column IS NOT DISTINCT FROM $4
                   AND e.legacy_columns IS NOT DISTINCT FROM NULLIF(\(list(5)), '{}')
                   AND e.modern_columns IS NOT DISTINCT FROM NULLIF(\(list(6)), '{}')) AS current
            """, binds: binds(plan: plan.name, table: plan.table.description, key: plan.key, revision: plan.revision,
                              legacyColumns: columns.legacy, modernColumns: columns.modern)))[0].decode(Bool.self, "current")
        if !isCurrent { try register(plan, on: connection) }
    }

    /// `$index` of ``binds(plan:table:key:revision:legacyColumns:modernColumns:)``, a JSON array, as `text[]`.
    private static func list(_ index: Int) -> String { "ARRAY(SELECT jsonb_array_elements_text($\(index)::jsonb))" }

    /// The six parameters of `cutover.register_record_plan`, the column lists as JSON arrays.
    private static func binds(plan name: String, table: String, key: [String], revision: String?,
                              legacyColumns: [String], modernColumns: [String]) -> [PostgresBind] {
        func array(_ names: [String]) -> String { "[" + names.map(RecordJSON.quoted).joined(separator: ", ") + "]" }
        return [name.postgresBind, table.postgresBind, array(key).postgresBind, revision.postgresBind,
                array(legacyColumns).postgresBind, array(modernColumns).postgresBind]
    }

    /// Registers (or changes) the entity of plan `name`: `table` (`name` or `schema.name`, as
    /// a plan writes it), its `key` columns, its `revision` column (nil for `xmin`), and the
    /// columns the legacy and the modern writer write. A save of exactly one path's columns
    /// runs statements written out for the table (`cutover.make_record_save`); any other save,
    /// and every save of an entity registered without them, is made by statements put
    /// together at each call, with the same outcomes, only slower.
    public static func register(plan name: String, table: String, key: [String], revision: String?,
                                legacyColumns: [String] = [], modernColumns: [String] = [],
                                on connection: PostgresConnection) throws {
        try connection.query(PostgresQuery(
            unsafeSQL: "SELECT cutover.register_record_plan($1, $2, \(list(3)), $4, NULLIF(\(list(5)), '{}'), NULLIF(\(list(6)), '{}'))",
            binds: binds(plan: name, table: table, key: key, revision: revision, legacyColumns: legacyColumns,
                         modernColumns: modernColumns)))
    }

    /// Makes plan `name`'s save function again for its table as it is now; nothing when the
    /// plan is not registered. The phase runner does after every step that changes the table;
    /// call it after changing the table by other means, as the control schema's owner. Until
    /// then saves are as right, and slower (`docs/store.md`).
    public static func remakeSave(plan name: String, on connection: PostgresConnection) throws {
        try connection.query("SELECT cutover.make_record_save(e.plan) FROM cutover.record_plans e WHERE e.plan = \(name)")
    }
}
