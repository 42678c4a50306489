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
    /// Registers (or changes) the entity of a declarative plan: its table, its key and its
    /// ``DeclarativePlan/revision`` column (the row's `xmin` when it names none).
    ///
    /// - Throws: a ``PostgresError`` (SQLSTATE 22023) naming the problem when the table
    ///   exists without the key's columns, a unique index on exactly them, or with a revision
    ///   column that is not `bigint`.
    public static func register(_ plan: DeclarativePlan, on connection: PostgresConnection) throws {
        try register(plan: plan.name, table: plan.table.description, key: plan.key, revision: plan.revision, on: connection)
    }

    /// Registers (or changes) the entity of plan `name`: `table` (`name` or `schema.name`, as
    /// a plan writes it), its `key` columns and its `revision` column, or nil for `xmin`.
    public static func register(plan name: String, table: String, key: [String], revision: String?,
                                on connection: PostgresConnection) throws {
        let keyArray = "[" + key.map(RecordJSON.quoted).joined(separator: ", ") + "]"
        try connection.query(PostgresQuery(
            unsafeSQL: "SELECT cutover.register_record_plan($1, $2, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), $4)",
            binds: [name.postgresBind, table.postgresBind, keyArray.postgresBind, revision.postgresBind]))
    }
}
