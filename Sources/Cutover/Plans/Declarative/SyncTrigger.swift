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
/// PL/pgSQL does fast: every expression it evaluates is a simple one, and the plan's
/// expressions and the comparisons are SQL functions with SQL-standard bodies, which
/// PostgreSQL inlines, so that none of them is a call or plans a query. It reads its setting
/// before it looks at the legacy-activity record, and it has no `SET` clause: a function's
/// `SET search_path` costs every call two changes of the setting and, before PostgreSQL 17,
/// two searches of the path.
///
/// **Names.** The function is `SECURITY DEFINER`, so application roles need no right on the
/// `cutover` schema, and it runs under the caller's `search_path`. So it names nothing a
/// caller could redirect: every function it calls is qualified (`pg_catalog.`, `cutover.`),
/// its one operator too (`OPERATOR(pg_catalog.=)`), and the comparisons of columns
/// (`IS DISTINCT FROM`, whose `=` would be looked up on the path) and the plan's expressions
/// are the functions above, whose names the server resolved when expand made them, under
/// ``RowFunction/pinnedSearchPath``. The legacy-activity record is written by a function of
/// its own (``noteFunction``), with its `search_path` fixed, which the trigger calls at most
/// once a second per session.
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

    /// A column's comparison of two values, `IS DISTINCT FROM` bound when expand makes it:
    /// `cutover.<table>_<column>_differs(a, b)`.
    struct Comparison: Sendable, Hashable {
        let column: String
        let name: String

        /// `cutover.name` as SQL.
        var qualifiedName: String { "cutover." + SQLName.identifier(name) }

        /// Whether `new` and `old` differ, NULLs being values like any other.
        func call(_ new: String, _ old: String) -> String { "\(qualifiedName)(\(new), \(old))" }

        /// The statement that creates or replaces it over `table` as the server names it, once
        /// the table has its column, under the pinned `search_path`.
        func definition(table: String) -> String {
            let type = "\(table).\(SQLName.identifier(column))%TYPE"
            return """
                CREATE OR REPLACE FUNCTION \(qualifiedName)(\(type), \(type)) RETURNS boolean
                LANGUAGE sql
                RETURN $1 IS DISTINCT FROM $2
                """
        }
    }

    let table: QualifiedName
    /// The prefix of the names of the plan's functions: the table's name, after its schema's
    /// unless that is `public`.
    let stem: String
    /// The key the backfill walks, whose change converts a row still to convert; empty when
    /// there is nothing to backfill.
    let key: [String]
    let groups: [Group]
    let fills: [Fill]

    /// The trigger function, `cutover.<table>_sync`, as SQL.
    var function: String { "cutover." + SQLName.identifier(SQLName.derived(stem, "sync")) }

    /// The function that records a legacy write, `cutover.<table>_note_legacy_write`, as SQL.
    var noteFunction: String { "cutover." + SQLName.identifier(SQLName.derived(stem, "note_legacy_write")) }

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

    /// The UPDATE moves the row along the key.
    private var keyMoved: String { differs(key, new: "NEW", old: "OLD") }

    /// The columns the trigger compares, each once: the groups', the key's and the dropped ones.
    var comparisons: [Comparison] {
        var seen: Set<String> = []
        let columns = groups.flatMap { $0.legacy + $0.modern } + key + fills.filter { $0.kind == .dropped }.map(\.column)
        return columns.filter { seen.insert($0).inserted }.map(comparison)
    }

    /// The comparison of `column`, one of ``comparisons``'.
    private func comparison(_ column: String) -> Comparison {
        Comparison(column: column, name: SQLName.derived(stem, column, "differs"))
    }

    /// Whether the record `new`'s `columns` differ from the record `old`'s, or from `values`
    /// when given: any one of them.
    private func differs(_ columns: [String], new: String, old: String? = nil, values: [String]? = nil) -> String {
        let pairs = columns.enumerated().map { index, column in
            comparison(column).call("\(new).\(SQLName.identifier(column))",
                                    values?[index] ?? "\(old ?? "OLD").\(SQLName.identifier(column))")
        }
        guard pairs.count != 1 else { return pairs[0] }
        return pairs.isEmpty ? "false" : "(" + pairs.joined(separator: " OR ") + ")"
    }

    /// `pg_catalog.current_setting(name, true)` is `value`; false while it is unset.
    private static func setting(_ name: String, is value: String) -> String {
        "coalesce(pg_catalog.current_setting(\(SQLName.literal(name)), true) OPERATOR(pg_catalog.=) \(SQLName.literal(value)), false)"
    }

    /// `TG_OP` is `operation`.
    private static func operation(is operation: String) -> String { "TG_OP OPERATOR(pg_catalog.=) '\(operation)'" }

    /// Every row function the trigger calls.
    var rowFunctions: [RowFunction] {
        groups.flatMap { $0.up + $0.down } + fills.compactMap(\.function)
    }

    /// `CREATE OR REPLACE FUNCTION cutover.<table>_sync()`.
    ///
    /// Every expression it evaluates is compiled again in each transaction that fires it, and
    /// the old application commits each statement on its own: so each path evaluates as few as
    /// it can. The new writer's setting is read only where a legacy write is told apart, and a
    /// legacy write notes itself where it is found, so that no variable is kept for either.
    func createFunction() -> CompiledStatement {
        let body = groups.map(groupBlock) + fills.map(fillBlock)
        let block = """
            BEGIN
            \(body.joined(separator: "\n"))
                RETURN NEW;
            END
            """
        return CompiledStatement("""
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER AS \(SQLName.dollarQuotedBlock(block, tag: "cutover"))
            """, lock: nil, work: .catalog)
    }

    /// The second and the table a session last looked at the legacy-activity record in, as
    /// ``legacyNotedSetting`` keeps them: `1733560000 public.orders`.
    private var noted: String {
        "(CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) "
            + SQLName.literal(" " + table.sql) + ")"
    }

    /// The new writer said so (`SET LOCAL cutover.writer = 'modern'`).
    private static var declaredModern: String { setting("cutover.writer", is: "modern") }

    /// Calls ``noteFunction`` when the session has not looked at the record for this table in
    /// this second and `condition` (a legacy write) holds. `condition` is asked only then: in
    /// most writes the session has looked already, and the expression PL/pgSQL would otherwise
    /// prepare in every transaction is prepared at most once a second.
    private func note(if condition: String?) -> [String] {
        let unnoted = "NOT coalesce(pg_catalog.current_setting('\(Self.legacyNotedSetting)', true) OPERATOR(pg_catalog.=) \(noted), false)"
        let perform = "PERFORM \(noteFunction)();"
        guard let condition else { return ["IF \(unnoted) THEN", "    " + perform, "END IF;"] }
        return ["IF \(unnoted) THEN", "    IF \(condition) THEN", "        " + perform, "    END IF;", "END IF;"]
    }

    /// `CREATE OR REPLACE FUNCTION cutover.<table>_note_legacy_write()`: the legacy-activity
    /// record set to now, at most once a second, and the second noted for the session.
    func createNoteFunction() -> CompiledStatement {
        let activity = SQLName.literal(table.sql)
        let block = """
            BEGIN
                PERFORM 1 FROM cutover.legacy_activity
                 WHERE table_name = \(activity) AND last_write_at < now() - interval '1 second'
                   FOR UPDATE SKIP LOCKED;
                IF FOUND THEN
                    UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = \(activity);
                END IF;
                PERFORM set_config('\(Self.legacyNotedSetting)', \(noted), false);
            END
            """
        return CompiledStatement("""
            CREATE OR REPLACE FUNCTION \(noteFunction)() RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS \(SQLName.dollarQuotedBlock(block, tag: "cutover"))
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
        let allModernNull = modern.map { "\($0) IS NULL" }.joined(separator: " AND ")
        func lines(_ lines: [String], _ indent: String) -> String { lines.joined(separator: "\n" + indent) }
        return """
                -- \(group.legacy.joined(separator: ", ")) → \(group.modern.joined(separator: ", "))
                IF \(Self.operation(is: "INSERT")) THEN
                    IF \(allModernNull) AND NOT \(Self.declaredModern) THEN
                        \(Self.assign(modern, group.up))
                        \(lines(note(if: nil), "            "))
                    ELSE
                        \(Self.assign(legacy, group.down))
                    END IF;
                ELSIF \(differs(group.modern, new: "NEW")) THEN
                    IF \(differs(group.legacy, new: "NEW")) OR \(differs(group.modern, new: "NEW", values: group.up.map { $0.call("OLD") })) THEN
                        \(Self.assign(legacy, group.down))
                    END IF;
                ELSIF \(differs(group.legacy, new: "NEW")) THEN
                    \(Self.assign(modern, group.up))
                    \(lines(note(if: "NOT " + Self.declaredModern), "        "))
                ELSIF \(allModernNull) AND (\(keyMoved) OR \(Self.setting(Self.backfillSetting, is: "on"))) THEN
                    \(Self.assign(modern, group.up))
                END IF;
            """
    }

    /// `NEW.a := f(NEW);`, or for several columns one `SELECT … INTO`, so that every function
    /// reads the row as it was before any of them is assigned. The functions are inlined.
    private static func assign(_ targets: [String], _ functions: [RowFunction]) -> String {
        let calls = functions.map { $0.call("NEW") }
        guard targets.count > 1 else { return "\(targets.first ?? "NULL") := \(calls.first ?? "NULL");" }
        return "SELECT \(calls.joined(separator: ", ")) INTO \(targets.joined(separator: ", "));"
    }

    private func fillBlock(_ fill: Fill) -> String {
        let column = "NEW." + SQLName.identifier(fill.column)
        let old = "OLD." + SQLName.identifier(fill.column)
        let call = fill.function.map { $0.call("NEW") } ?? "NULL"
        let assign = fill.function.map { ["    \(column) := \($0.call("NEW"));"] } ?? []
        let isInsert = Self.operation(is: "INSERT")
        let lines: [String]
        let indented = { (lines: [String]) in lines.map { "    " + $0 } }
        let notModern = "NOT " + Self.declaredModern
        switch fill.kind {
        case .newColumn:
            lines = ["-- \(fill.column): added", "IF \(isInsert) AND \(column) IS NULL AND \(notModern) THEN"]
                + assign + indented(note(if: nil)) + ["ELSIF \(Self.operation(is: "UPDATE")) AND \(column) IS NULL AND \(keyMoved) THEN"]
                + assign + ["END IF;"]
        case .notNull:
            lines = ["-- \(fill.column): NOT NULL at contract", "IF \(column) IS NULL THEN"]
                + indented(note(if: "\(notModern) AND (\(isInsert) OR \(old) IS NOT NULL)"))
                + assign + ["END IF;"]
        case .dropped:
            lines = ["-- \(fill.column): dropped at contract",
                     "IF \(isInsert) THEN",
                     "    IF \(column) IS NULL THEN",
                     "        \(column) := \(call);",
                     "    ELSIF \(differs([fill.column], new: "NEW", values: [call])) THEN"]
                + indented(indented(note(if: notModern)))
                + ["    END IF;",
                   "ELSIF \(differs([fill.column], new: "NEW")) THEN"]
                + indented(note(if: notModern))
                + ["END IF;"]
        }
        return lines.map { "    " + $0 }.joined(separator: "\n")
    }

    /// `a IS DISTINCT FROM b`, or `(a1, a2) IS DISTINCT FROM (b1, b2)` for several.
    static func distinct(_ left: [String], _ right: [String]) -> String {
        guard left.count > 1 else { return "\(left.first ?? "NULL") IS DISTINCT FROM \(right.first ?? "NULL")" }
        return "(\(left.joined(separator: ", "))) IS DISTINCT FROM (\(right.joined(separator: ", ")))"
    }
}
