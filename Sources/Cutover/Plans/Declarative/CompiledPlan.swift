/// What ``DeclarativePlan/compile()`` makes: a plan the runner runs like a plan of SQL files,
/// and the files it generated.
public struct CompiledPlan: Sendable, Hashable {
    /// The compatibility number of the SQL this version's compiler makes: bumped when SQL
    /// compiled by this version cannot carry on a migration that SQL compiled by an earlier
    /// version began.
    ///
    /// A plan pins it when it begins (``PlanPins``). While it stays the same, a migration
    /// begun by an earlier Cutover goes on with the SQL this version compiles from the same
    /// declaration, though the text differs; once it changes, such a migration is finished
    /// (or rolled back) by the version that began it.
    public static let compatibility = 1

    /// The steps, their files and checks, as a format-1 manifest would give them.
    public let plan: MigrationPlan
    /// The generated files, in the order the steps name them.
    public let files: [CompiledFile]
    /// Whether expand's trigger records legacy writes in `cutover.legacy_activity`; false when
    /// the plan changes nothing an old writer writes, so there is no legacy write to watch for.
    public let tracksLegacyWrites: Bool
    /// Why legacy writes are not tracked, when they are not.
    public let legacyWritesNote: String
    /// Statements that compile every expression, type and name of the plan against a
    /// temporary copy of the table, for the runner to run in a transaction it rolls back
    /// before expand: a mistake is refused by the server before the real table is touched.
    public let expressionProbe: [ProbeStatement]
    /// The declarative plan it was compiled from: its key and operations, for `phase plan`.
    public let declaration: DeclarativePlan
    /// The sync trigger's function as SQL (`cutover.orders_sync`), when the plan has a trigger.
    /// Its name joins the table's schema and name, so two tables can come to the same one
    /// (`public.sales_eu_orders`, `sales_eu.orders`): expand refuses to replace the function
    /// while another table's trigger calls it.
    public let syncFunction: String?
    /// The checks `phase rollback expand` runs first: nothing of the application's (a view, a
    /// function with an SQL-standard body, a policy…) uses a column the revert drops, and no
    /// index, constraint or statistics object that also covers a column that stays goes with
    /// them. None when expand adds no column.
    public let expandRevertChecks: [PlanCheck]

    /// The text of every generated file by path; the `sql` operations' files are the plan folder's.
    public var fileTexts: [String: String] {
        Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0.text) })
    }
}
