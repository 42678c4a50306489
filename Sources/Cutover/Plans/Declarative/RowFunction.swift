/// A plan expression compiled once into an SQL function of the table's row, which the sync
/// trigger, the backfill and the checks all call: one definition, resolved one way.
///
/// ```sql
/// CREATE OR REPLACE FUNCTION cutover.orders_status_code_up(public.orders) RETURNS public.orders.status_code%TYPE
/// LANGUAGE sql
/// RETURN (CASE ($1)."status" WHEN 'new' THEN 1 END)
/// ```
///
/// The body is SQL-standard (`RETURN …`, PostgreSQL 14 and later): the server resolves its
/// names when the function is made, under the `search_path` expand pins for it
/// (``pinnedSearchPath``), and keeps what they resolved to. A role that later puts a function
/// or an operator on a caller's `search_path` cannot change what the expression calls, so the
/// function needs no `SET search_path` of its own, and without one PostgreSQL inlines it where
/// it is called: the sync trigger and the backfill evaluate the expression itself. The
/// expression reads the row's columns as fields of `$1`; one whose words the reader cannot all
/// tell apart from columns (see ``SQLExpression/fields(of:)``) reads them by their bare names
/// from `($1).*` in a subquery, which is not inlined. Its result is cast to the column's type
/// as an assignment would cast it.
struct RowFunction: Sendable, Hashable {
    /// The function's name in the `cutover` schema.
    let name: String
    /// The column whose value it gives, whose type it returns.
    let column: String
    /// The expression it evaluates.
    let expression: SQLExpression
    /// What the expression is, as a refusal names it: `the up expression of status_code`.
    let subject: String

    /// The `search_path` under which the functions' bodies are resolved when they are made.
    static let pinnedSearchPath = "pg_catalog, pg_temp"

    /// `cutover.name` as SQL.
    var qualifiedName: String { "cutover." + SQLName.identifier(name) }

    /// The function called on `row`, an alias or record of the table's row type.
    func call(_ row: String) -> String { "\(qualifiedName)(\(row))" }

    /// The function's value on the record `row`, written for code that runs under the
    /// pinned `search_path` (`cutover.count_rows`): the expression itself over `row`'s fields
    /// where it can be (see ``SQLExpression/fields(of:)``), else the call. An assignment casts
    /// either one to the column's type as the function's own result is cast, so both give the
    /// column one value; elsewhere the expression's own type stands.
    func evaluated(over row: String) -> String {
        expression.fields(of: row).map { "(\($0))" } ?? call(row)
    }

    /// `cutover.name(public.orders)`, as DROP FUNCTION names it.
    func signature(_ table: QualifiedName) -> String { "\(qualifiedName)(\(table.sql))" }

    /// The statement that creates or replaces it over `table`, the table's row type as the
    /// server names it, whose column gives the result type: `cutover.name(table)`, or the name
    /// given (the expression probe's, in `pg_temp`). It is to run under the pinned
    /// `search_path` (see ``pinned(table:definitions:)``).
    func definition(table: String, named name: String? = nil, orReplace: Bool = true) -> String {
        let body = expression.fields(of: "($1)").map { "(\($0))" }
            ?? "(SELECT (\(expression.text)) FROM (SELECT ($1).*) AS cutover_row)"
        return """
            CREATE \(orReplace ? "OR REPLACE " : "")FUNCTION \(name ?? qualifiedName)(\(table)) RETURNS \(table).\(SQLName.identifier(column))%TYPE
            LANGUAGE sql
            RETURN \(body)
            """
    }

    /// One statement that makes functions under the pinned `search_path` and then gives the
    /// transaction back the `search_path` it had.
    ///
    /// The table is named by the plan, maybe without its schema, which the pinned path would not
    /// find: the block reads it under the session's own path first, and then names it as the
    /// server names it under the pinned one (`public.drafts`) in each definition. `definitions`
    /// write each function's statement given the table's name; `names` are the functions', for
    /// the block's first line.
    static func pinned(table: String, making names: [String], definitions: [(String) -> String]) -> String {
        // NUL never reaches the server in SQL text, so it cannot clash with a plan's own text.
        let marker = "\u{0}table\u{0}"
        let statements = definitions.map { definition in
            let text = definition(marker).replacing("%", with: "%%").replacing(marker, with: "%1$s")
            return "    EXECUTE pg_catalog.format(" + SQLName.dollarQuoted("\n" + text + "\n    ", tag: "definition") + ", qualified);"
        }
        // A name may hold a line break in its quotes; the comment must not end there.
        let listed = String(names.joined(separator: ", ").map { $0.isNewline ? " " : $0 })
        let block = """
            -- makes \(listed) under search_path \(pinnedSearchPath)
            DECLARE
                saved text := pg_catalog.current_setting('search_path');
                relation pg_catalog.oid := \(SQLName.literal(table))::pg_catalog.regclass;
                qualified text;
            BEGIN
                PERFORM pg_catalog.set_config('search_path', \(SQLName.literal(pinnedSearchPath)), true);
                qualified := relation::pg_catalog.regclass::pg_catalog.text;
            \(statements.joined(separator: "\n"))
                PERFORM pg_catalog.set_config('search_path', saved, true);
            END
            """
        return "DO " + SQLName.dollarQuotedBlock(block, tag: "pinned")
    }
}
