extension PlanCompiler {
    /// The temporary copy of the table the probe compiles against.
    static let probeTable = "pg_temp.cutover_expression_probe"

    /// Statements that make a temporary, empty copy of the table's columns, add the modern
    /// columns to it, and create on it every row function, default, CHECK and index predicate
    /// the plan declares, so that the server parses and type-checks each one (SQL-standard
    /// function bodies are resolved at creation) while the real table is only read.
    func expressionProbe() -> [ProbeStatement] {
        let probe = Self.probeTable
        // The copy is made from the catalog, not by LIKE, so that the probe takes no lock on the
        // table: a session holding it (or an expand waiting for it) must not fail the check.
        var statements = [ProbeStatement(subject: "the table \(table.sql)", sql: "DO " + SQLName.dollarQuotedBlock("""
            DECLARE
                columns text;
            BEGIN
                SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) INTO columns
                  FROM pg_attribute WHERE attrelid = to_regclass(\(SQLName.literal(table.sql))) AND attnum > 0 AND NOT attisdropped;
                IF columns IS NULL THEN
                    RAISE EXCEPTION 'relation % does not exist', \(SQLName.literal(table.sql));
                END IF;
                EXECUTE 'CREATE TEMP TABLE cutover_expression_probe (' || columns || ') ON COMMIT DROP';
            END
            """, tag: "probe"))]
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
        // Each made as expand makes it, under the pinned search_path, given back after it.
        for function in rowFunctions {
            let name = "pg_temp." + SQLName.identifier(function.name)
            statements.append(.init(subject: function.subject, sql: RowFunction.pinned(table: probe, making: [name], definitions: [
                { function.definition(table: $0, named: name, orReplace: false) },
            ])))
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
                // A temporary table cannot reference a permanent one, and reading the other table
                // would lock it: its columns are looked up in the catalog, and compared by type.
                let pairs = zip(columns, references.columns).map { own, referenced in
                    "(\(SQLName.literal(own)), \(SQLName.literal(referenced)))"
                }.joined(separator: ", ")
                statements.append(.init(subject: "the foreign key \(constraint.name)", sql: "DO " + SQLName.dollarQuotedBlock("""
                    BEGIN
                        IF (SELECT count(*) FROM (VALUES \(pairs)) AS k (own, referenced)
                              JOIN pg_attribute AS o ON o.attrelid = to_regclass('\(probe)') AND o.attname = k.own
                              JOIN pg_attribute AS r ON r.attrelid = to_regclass(\(SQLName.literal(references.table.sql)))
                                                    AND r.attname = k.referenced AND NOT r.attisdropped
                             WHERE o.atttypid = r.atttypid) <> \(columns.count) THEN
                            RAISE EXCEPTION 'the referenced columns of % do not exist there with the same types', \(SQLName.literal(references.table.sql));
                        END IF;
                    END
                    """, tag: "probe")))
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
