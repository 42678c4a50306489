extension PlanCompiler {
    /// The temporary copy of the table the probe compiles against.
    static let probeTable = "pg_temp.cutover_expression_probe"

    /// Statements that make a temporary, empty copy of the table's columns, add the modern
    /// columns to it, and create on it every row function, default, CHECK and index predicate
    /// the plan declares, so that the server parses and type-checks each one (function bodies
    /// are checked at creation) while the real table is only read (`LIKE` takes ACCESS SHARE).
    func expressionProbe() -> [ProbeStatement] {
        let probe = Self.probeTable
        var statements = [ProbeStatement(subject: "the table \(table.sql)",
                                         sql: "CREATE TEMP TABLE cutover_expression_probe (LIKE \(table.sql)) ON COMMIT DROP")]
        statements.append(.init(subject: "the key (\(plan.key.joined(separator: ", ")))",
                                sql: "SELECT \(Self.list(plan.key)) FROM \(probe) ORDER BY \(Self.list(plan.key)) LIMIT 0"))
        for (column, _) in addedColumns {
            let name = SQLName.identifier(column.name)
            statements.append(.init(subject: "the type of \(column.name)", sql: "ALTER TABLE \(probe) ADD COLUMN \(name) \(column.type)"))
            if let value = column.defaultValue {
                statements.append(.init(subject: "the default of \(column.name)",
                                        sql: "ALTER TABLE \(probe) ALTER COLUMN \(name) SET DEFAULT \(value.text)"))
            }
        }
        for function in rowFunctions {
            statements.append(.init(subject: function.subject,
                                    sql: function.definition(named: "pg_temp.\(SQLName.identifier(function.name))(\(probe))",
                                                             orReplace: false)))
        }
        for constraint in expandConstraints + contractConstraints {
            switch constraint.kind {
            case .check(let expression):
                statements.append(.init(subject: "the check \(constraint.name)",
                                        sql: "ALTER TABLE \(probe) ADD CHECK (\(expression.text)) NOT VALID"))
            case .unique(let columns, _):
                statements.append(.init(subject: "the unique columns of \(constraint.name)",
                                        sql: "CREATE UNIQUE INDEX ON \(probe) (\(Self.list(columns)))"))
            case .foreignKey(let columns, let references):
                // A temporary table cannot reference a permanent one: compare the columns' types instead.
                statements.append(.init(subject: "the foreign key \(constraint.name)", sql: """
                    SELECT \(zip(columns, references.columns).map { "p.\(SQLName.identifier($0)) = r.\(SQLName.identifier($1))" }
                        .joined(separator: " AND ")) FROM \(probe) AS p, \(references.table.sql) AS r LIMIT 0
                    """))
            case .notNull(let column):
                statements.append(.init(subject: "NOT NULL of \(column)",
                                        sql: "ALTER TABLE \(probe) ALTER COLUMN \(SQLName.identifier(column)) SET NOT NULL"))
            }
        }
        for operation in plan.operations {
            guard case .createIndex(let index) = operation else { continue }
            statements.append(.init(subject: "index \(index.name)", sql: "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX ON \(probe)"
                + (index.method == "btree" ? "" : " USING \(index.method)") + " (\(Self.list(index.columns)))"
                + (index.predicate.map { " WHERE \($0.text)" } ?? "")))
        }
        return statements
    }
}
