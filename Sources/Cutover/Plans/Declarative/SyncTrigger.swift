/// The trigger that keeps the legacy and the modern representation of every row in step from
/// expand until contract, whoever writes, and records legacy writes for contract's check.
///
/// It is one `BEFORE INSERT OR UPDATE OF <the columns it syncs> … FOR EACH ROW` trigger per
/// table. It only ever assigns `NEW`'s columns and touches no other row of the table, so it
/// never fires itself and never loops; its one write elsewhere is the legacy-activity record.
///
/// **Telling an old writer from a new one.** Old writers know only the legacy columns; no
/// modern column existed before expand, and expand gives them no default. So the trigger looks
/// at which columns the statement gave a value (INSERT) or changed (UPDATE, `NEW` against
/// `OLD`), per `alter_column`:
///
/// | statement | trigger | legacy write? |
/// |---|---|---|
/// | INSERT, every modern column NULL (legacy columns only, or nothing) | modern ← `up(NEW)` | yes |
/// | INSERT naming a modern column (alone or with legacy ones) | legacy ← `down(NEW)`: the modern value wins | no |
/// | UPDATE changing legacy columns only | modern ← `up(NEW)` (`NEW`'s modern columns hold the current value, so `up` may merge into it) | yes |
/// | UPDATE changing modern columns only, to what `up(OLD)` gives (the backfill, or a writer agreeing) | nothing | no |
/// | UPDATE changing modern columns only, otherwise | legacy ← `down(NEW)` | no |
/// | UPDATE changing both | legacy ← `down(NEW)`: only a new writer can name modern columns | no |
/// | UPDATE changing neither (same values, another column) | nothing, before backfill or after | no |
/// | the same, by the backfill (`cutover.backfill` set to `on`), modern columns all NULL | modern ← `up(NEW)` | no |
/// | the same, changing the key, modern columns all NULL | modern ← `up(NEW)` | no |
///
/// A new writer may also say so: `SET LOCAL cutover.writer = 'modern'` (read with
/// `current_setting(…, true)`, so an unset value never raises) makes an INSERT with every
/// modern column NULL a modern one, keeps a NULL it gives a new column, and records nothing.
/// `INSERT … ON CONFLICT DO UPDATE` runs the INSERT rule on the proposed row and then the
/// UPDATE rule on the row's latest version; `COPY` fires the INSERT rule row by row; DELETE
/// and TRUNCATE need nothing. NULLs are values like any other (`IS DISTINCT FROM`).
///
/// `add_column`: an INSERT leaving the column NULL gets `up(NEW)` (or the default) and is a
/// legacy write (such an INSERT fails after contract); an UPDATE changing the key of a row
/// whose column is NULL gets it too. `set_not_null`: a NULL written gets `up`, and a write of
/// NULL is a legacy write. `drop_column`: an INSERT leaving it NULL gets `down(NEW)`; an INSERT
/// giving it another value than `down`, or an UPDATE changing it, is a legacy write.
///
/// **A key that moves.** The backfill walks the key once, from its cursor on, so a row still
/// to convert that an UPDATE moves behind the cursor would never be walked again. The trigger
/// therefore also fires on the key's columns, and converts such a row itself, as the backfill
/// would have: the change is no legacy write, since both applications write the key.
///
/// **Never raising on an old statement.** Nothing the trigger adds enforces anything: modern
/// columns stay nullable, and the constraints an old writer's values could break through `up`
/// (NOT NULL, CHECK, UNIQUE, foreign keys of a column `up` fills) come at contract, after
/// contract's checks have counted their violations. What is left is the plan's own expressions.
///
/// **Races.** A BEFORE UPDATE trigger runs once the row is locked, on its latest committed
/// version (READ COMMITTED re-reads it), so `OLD` and the current modern value are never stale:
/// racing writers are applied one after the other, each mirrored from the row the other left.
/// The backfill skips locked rows and converts only rows whose modern columns are all NULL:
/// it names them with their own values under its setting and the trigger fills them, so each
/// row's `up` runs once and legacy values are never rewritten by it. The setting only ever
/// fills NULL modern columns from `up(NEW)`, so a session that sets it can do no more than the
/// backfill would do to the same row; it cannot make the representations disagree.
///
/// **Legacy activity.** A legacy write notes `now()` in `cutover.legacy_activity`, at most
/// once a second, locking the row with `SKIP LOCKED` so that legacy writers never queue behind
/// one another there; the writer holding the lock records the same second. A session looks at
/// that row at most once a second per table: it keeps the second and the table it last looked
/// in its `cutover.legacy_noted` setting (a session setting, undone with a transaction that
/// rolls back), so the record is never more than two seconds behind the last legacy write.
///
/// **Cost.** The trigger runs on every write of the old application, so it keeps to what
/// PL/pgSQL does fast: it assigns the plan's expressions themselves over `NEW`'s fields
/// (``RowFunction/evaluated(over:)``) rather than calling the row functions, whose queries
/// PostgreSQL before 18 plans again in every transaction, and reads its setting before it
/// reads the legacy-activity table. Comparisons with `up(OLD)`, on the new writers' paths,
/// write the expression over `OLD`'s fields cast to the function's result type
/// (``RowFunction/compared(over:)``), so that a modern writer's save plans no query either.
///
/// The function is `SECURITY DEFINER` with `search_path` fixed to `pg_catalog, pg_temp`, so
/// application roles need no right on the `cutover` schema and cannot redirect what it calls.
struct SyncTrigger: Sendable, Hashable {
    /// An `alter_column`'s columns and functions.
    struct Group: Sendable, Hashable {
        let legacy: [String]
        let modern: [String]
        let up: [RowFunction]
        let down: [RowFunction]
    }

    /// A column filled where a write leaves it NULL.
    struct Fill: Sendable, Hashable {
        /// How the fill applies.
        enum Kind: Sendable, Hashable {
            /// `add_column`: on INSERT only; the write is a legacy one.
            case newColumn
            /// `set_not_null`: on INSERT and UPDATE; a write of NULL is a legacy one.
            case notNull
            /// `drop_column`: on INSERT; a value other than the fill's is a legacy write.
            case dropped
        }
        let column: String
        let kind: Kind
        let function: RowFunction?
    }

    let table: QualifiedName
    /// The trigger function, `cutover.<table>_sync`, as SQL.
    let function: String
    /// The key the backfill walks, whose change converts a row still to convert; empty when
    /// there is nothing to backfill.
    let key: [String]
    let groups: [Group]
    let fills: [Fill]

    /// The trigger's name on the table.
    static let triggerName = "cutover_sync"

    /// The session setting the backfill batch sets for its transaction: a row whose modern
    /// columns it names unchanged, all NULL, gets them from `up(NEW)` (see the table above).
    static let backfillSetting = "cutover.backfill"

    /// The session setting in which a legacy write notes the second and the table it last
    /// looked at `cutover.legacy_activity` for, so that later legacy writes of the same session
    /// in the same second do not look again.
    static let legacyNotedSetting = "cutover.legacy_noted"

    /// Whether there is anything to sync.
    var isNeeded: Bool { !groups.isEmpty || !fills.isEmpty }

    /// The columns whose UPDATE fires the trigger: those it syncs, then the key's.
    var updateColumns: [String] {
        let synced = groups.flatMap { $0.legacy + $0.modern } + fills.filter { $0.kind != .newColumn }.map(\.column)
        return synced + key.filter { !synced.contains($0) }
    }

    /// `(NEW.k) IS DISTINCT FROM (OLD.k)`: the UPDATE moves the row along the key.
    private var keyMoved: String {
        Self.distinct(key.map { "NEW." + SQLName.identifier($0) }, key.map { "OLD." + SQLName.identifier($0) })
    }

    /// Every row function the trigger calls.
    var rowFunctions: [RowFunction] {
        groups.flatMap { $0.up + $0.down } + fills.compactMap(\.function)
    }

    /// `CREATE OR REPLACE FUNCTION cutover.<table>_sync()`.
    func createFunction() -> CompiledStatement {
        let activity = SQLName.literal(table.sql)
        let noted = "(to_char(now(), 'YYYYMMDDHH24MISS ') || \(activity))"
        let body = groups.map(groupBlock) + fills.map(fillBlock)
        return CompiledStatement("""
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $cutover$
            DECLARE
                declared_modern boolean := current_setting('cutover.writer', true) IS NOT DISTINCT FROM 'modern';
                legacy_write boolean := false;
            BEGIN
            \(body.joined(separator: "\n"))
                IF legacy_write AND current_setting('\(Self.legacyNotedSetting)', true) IS DISTINCT FROM \(noted) THEN
                    PERFORM 1 FROM cutover.legacy_activity
                     WHERE table_name = \(activity) AND last_write_at < now() - interval '1 second'
                       FOR UPDATE SKIP LOCKED;
                    IF FOUND THEN
                        UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = \(activity);
                    END IF;
                    PERFORM set_config('\(Self.legacyNotedSetting)', \(noted), false);
                END IF;
                RETURN NEW;
            END
            $cutover$
            """, lock: nil, work: .catalog)
    }

    /// `CREATE OR REPLACE TRIGGER cutover_sync …`.
    func createTrigger() -> CompiledStatement {
        let columns = updateColumns
        let events = columns.isEmpty ? "INSERT" : "INSERT OR UPDATE OF " + columns.map(SQLName.identifier).joined(separator: ", ")
        return CompiledStatement("""
            CREATE OR REPLACE TRIGGER \(Self.triggerName)
                BEFORE \(events) ON \(table.sql)
                FOR EACH ROW EXECUTE FUNCTION \(function)()
            """, lock: .shareRowExclusive, work: .catalog)
    }

    private func groupBlock(_ group: Group) -> String {
        let modern = group.modern.map { "NEW." + SQLName.identifier($0) }
        let legacy = group.legacy.map { "NEW." + SQLName.identifier($0) }
        let oldModern = group.modern.map { "OLD." + SQLName.identifier($0) }
        let oldLegacy = group.legacy.map { "OLD." + SQLName.identifier($0) }
        let allModernNull = modern.map { "\($0) IS NULL" }.joined(separator: " AND ")
        return """
                -- \(group.legacy.joined(separator: ", ")) → \(group.modern.joined(separator: ", "))
                IF TG_OP = 'INSERT' THEN
                    IF NOT declared_modern AND \(allModernNull) THEN
                        \(Self.assign(modern, group.up))
                        legacy_write := true;
                    ELSE
                        \(Self.assign(legacy, group.down))
                    END IF;
                ELSIF \(Self.distinct(modern, oldModern)) THEN
                    IF \(Self.distinct(legacy, oldLegacy)) OR \(Self.distinct(modern, group.up.map { $0.compared(over: "OLD") })) THEN
                        \(Self.assign(legacy, group.down))
                    END IF;
                ELSIF \(Self.distinct(legacy, oldLegacy)) THEN
                    \(Self.assign(modern, group.up))
                    legacy_write := legacy_write OR NOT declared_modern;
                ELSIF \(allModernNull) AND (\(keyMoved) OR current_setting(\(SQLName.literal(Self.backfillSetting)), true) IS NOT DISTINCT FROM 'on') THEN
                    \(Self.assign(modern, group.up))
                END IF;
            """
    }

    /// `NEW.a := f(NEW);`, or for several columns one `SELECT … INTO`, so that every function
    /// reads the row as it was before any of them is assigned.
    private static func assign(_ targets: [String], _ functions: [RowFunction]) -> String {
        let calls = functions.map { $0.evaluated(over: "NEW") }
        guard targets.count > 1 else { return "\(targets.first ?? "NULL") := \(calls.first ?? "NULL");" }
        return "SELECT \(calls.joined(separator: ", ")) INTO \(targets.joined(separator: ", "));"
    }

    private func fillBlock(_ fill: Fill) -> String {
        let column = "NEW." + SQLName.identifier(fill.column)
        let old = "OLD." + SQLName.identifier(fill.column)
        let assign = fill.function.map { ["    \(column) := \($0.evaluated(over: "NEW"));"] } ?? []
        let lines: [String]
        switch fill.kind {
        case .newColumn:
            lines = ["-- \(fill.column): added", "IF TG_OP = 'INSERT' AND \(column) IS NULL AND NOT declared_modern THEN"]
                + assign + ["    legacy_write := true;", "ELSIF TG_OP = 'UPDATE' AND \(column) IS NULL AND \(keyMoved) THEN"]
                + assign + ["END IF;"]
        case .notNull:
            lines = ["-- \(fill.column): NOT NULL at contract", "IF \(column) IS NULL THEN",
                     "    legacy_write := legacy_write OR (NOT declared_modern AND (TG_OP = 'INSERT' OR \(old) IS NOT NULL));"]
                + assign + ["END IF;"]
        case .dropped:
            let call = fill.function.map { $0.call("NEW") } ?? "NULL"
            lines = ["-- \(fill.column): dropped at contract",
                     "IF TG_OP = 'INSERT' THEN",
                     "    IF \(column) IS NULL THEN",
                     "        \(column) := \(fill.function.map { $0.evaluated(over: "NEW") } ?? "NULL");",
                     "    ELSIF \(column) IS DISTINCT FROM \(call) THEN",
                     "        legacy_write := legacy_write OR NOT declared_modern;",
                     "    END IF;",
                     "ELSIF \(column) IS DISTINCT FROM \(old) THEN",
                     "    legacy_write := legacy_write OR NOT declared_modern;",
                     "END IF;"]
        }
        return lines.map { "    " + $0 }.joined(separator: "\n")
    }

    /// `a IS DISTINCT FROM b`, or `(a1, a2) IS DISTINCT FROM (b1, b2)` for several.
    static func distinct(_ left: [String], _ right: [String]) -> String {
        guard left.count > 1 else { return "\(left.first ?? "NULL") IS DISTINCT FROM \(right.first ?? "NULL")" }
        return "(\(left.joined(separator: ", "))) IS DISTINCT FROM (\(right.joined(separator: ", ")))"
    }
}
