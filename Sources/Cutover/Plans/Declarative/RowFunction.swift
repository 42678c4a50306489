/// A plan expression compiled once into an SQL function of the table's row, which the sync
/// trigger, the backfill and the checks all call: one definition, resolved one way.
///
/// ```sql
/// CREATE OR REPLACE FUNCTION cutover.orders_status_code_up(public.orders) RETURNS smallint
/// LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $cutover$
/// SELECT (CASE status WHEN 'new' THEN 1 END) FROM (SELECT ($1).*) AS cutover_row
/// $cutover$
/// ```
///
/// The expression reads the row's columns by their bare names from `($1).*`. Its result is
/// cast to the column's type as an assignment would cast it. The fixed `search_path` keeps a
/// role that can create objects in `public` from changing what the expression calls.
struct RowFunction: Sendable, Hashable {
    /// The function's name in the `cutover` schema.
    let name: String
    /// Its result type as SQL.
    let returns: String
    /// The expression it evaluates.
    let expression: SQLExpression
    /// What the expression is, as a refusal names it: `the up expression of status_code`.
    let subject: String

    /// `cutover.name` as SQL.
    var qualifiedName: String { "cutover." + SQLName.identifier(name) }

    /// The function called on `row`, an alias or record of the table's row type.
    func call(_ row: String) -> String { "\(qualifiedName)(\(row))" }

    /// The function's value on the record `row`, written for code that runs under the
    /// function's own `search_path` (the sync trigger, `cutover.count_rows`): the expression
    /// itself over `row`'s fields where it can be (see ``SQLExpression/fields(of:)``), else the
    /// call. An assignment casts either one to the column's type as the function's own result
    /// is cast, so both give the column one value; elsewhere the expression's own type stands.
    func evaluated(over row: String) -> String {
        expression.fields(of: row).map { "(\($0))" } ?? call(row)
    }

    /// The function's value on the record `row` as a comparison needs it, written for code
    /// that runs under the function's own `search_path` (the sync trigger): the expression over
    /// `row`'s fields cast to the function's result type, so that it compares as the call's
    /// result would, where both can be written (a result type of another column's `%TYPE` has
    /// no cast); else the call.
    func compared(over row: String) -> String {
        guard !returns.hasSuffix("%TYPE"), let fields = expression.fields(of: row) else { return call(row) }
        return "CAST((\(fields)) AS \(returns))"
    }

    /// `cutover.name(public.orders)`, as DROP FUNCTION names it.
    func signature(_ table: QualifiedName) -> String { "\(qualifiedName)(\(table.sql))" }

    /// The statement that creates or replaces it.
    func create(_ table: QualifiedName) -> CompiledStatement {
        CompiledStatement(definition(named: signature(table)), lock: nil, work: .catalog)
    }

    /// The same function, named `name(argument type)`, over another table of the same columns:
    /// how the expression probe compiles it against a scratch copy of the table.
    func definition(named signature: String, orReplace: Bool = true) -> String {
        """
        CREATE \(orReplace ? "OR REPLACE " : "")FUNCTION \(signature) RETURNS \(returns)
        LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $cutover$
        SELECT (\(expression.text)) FROM (SELECT ($1).*) AS cutover_row
        $cutover$
        """
    }
}
