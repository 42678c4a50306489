extension PlanCompiler {
    /// Expand's files: one transaction for the columns, functions and trigger, then one file
    /// outside a transaction for each index built `CONCURRENTLY`.
    func expandFiles() -> [CompiledFile] {
        var statements: [CompiledStatement] = []
        if trigger.isNeeded {
            statements.append(.init("""
                INSERT INTO cutover.legacy_activity (table_name, last_write_at)
                VALUES (\(SQLName.literal(table.sql)), '-infinity') ON CONFLICT (table_name) DO NOTHING
                """, lock: nil, work: .catalog))
        }
        // The PL/pgSQL functions first, before the table's ACCESS EXCLUSIVE lock: PL/pgSQL checks
        // their syntax, not their names. The row functions and the comparisons resolve their
        // names as they are made, the modern columns' too, so they follow the ALTER TABLE, under
        // the pinned search_path, which the transaction then gets back: the runner makes the
        // plan's save function in it after expand's last file.
        if trigger.isNeeded { statements += [trigger.createNoteFunction(), trigger.createFunction()] }
        if !addedColumns.isEmpty {
            let adds = addedColumns.map { "ADD COLUMN IF NOT EXISTS \(SQLName.identifier($0.definition.name)) \($0.definition.type)" }
            statements.append(.init("ALTER TABLE \(table.sql)\n    " + adds.joined(separator: ",\n    "),
                                    lock: .accessExclusive, work: .catalog))
        }
        for (column, isFilledByTrigger) in addedColumns where !isFilledByTrigger {
            if let value = column.defaultValue { statements.append(setDefault(column.name, value)) }
        }
        statements += expandConstraints.compactMap(addNotValid)
        let comparisons = trigger.isNeeded ? trigger.comparisons : []
        let definitions: [(String) -> String] = rowFunctions.map { function in { function.definition(table: $0) } }
            + comparisons.map { comparison in { comparison.definition(table: $0) } }
        if !definitions.isEmpty {
            let names = rowFunctions.map(\.qualifiedName) + comparisons.map(\.qualifiedName)
            statements.append(.init(RowFunction.pinned(table: table.sql, making: names, definitions: definitions), lock: nil, work: .catalog))
        }
        if trigger.isNeeded { statements.append(trigger.createTrigger()) }
        var files = [CompiledFile("compiled/expand.sql", purpose: """
            Expand, in one transaction: the sync trigger's functions, the modern columns beside the legacy
            ones (nullable, without a default an old writer would see, so no rewrite), the row functions
            and comparisons, whose names are resolved as they are made, and the trigger.
            """, statements: statements)]
        for constraint in expandConstraints {
            guard case .unique(let columns, _) = constraint.kind else { continue }
            files.append(concurrentIndex(Self.path("expand_index", files.count, constraint.name),
                                         purpose: "Expand, outside a transaction: the unique index of a column only new writers write.",
                                         sql: createIndex(constraint.name, columns: columns, isUnique: true, method: "btree", predicate: nil)))
        }
        for operation in plan.operations {
            guard case .createIndex(let index) = operation, !index.isUnique else { continue }
            files.append(concurrentIndex(Self.path("expand_index", files.count, index.name),
                                         purpose: "Expand, outside a transaction: an index the modern application needs.",
                                         sql: createIndex(index.name, columns: index.columns, isUnique: false, method: index.method,
                                                          predicate: index.predicate)))
        }
        return files
    }

    /// The indexes expand's revert drops: the plan's own, and the index of unconverted rows that
    /// expand built before the backfill walked the key, if a migration begun then has it.
    var expandRevertIndexes: [String] {
        var indexes = targets.isEmpty ? [] : [unconvertedIndex]
        for constraint in expandConstraints { if case .unique = constraint.kind { indexes.append(constraint.name) } }
        for operation in plan.operations { if case .createIndex(let index) = operation, !index.isUnique { indexes.append(index.name) } }
        return indexes
    }

    /// Expand's revert: the trigger, the functions, the plan's indexes and the modern columns go;
    /// every legacy column, kept current by the trigger, stays.
    func expandRevertFiles() -> [CompiledFile] {
        var statements = dropSync()
        statements += dropIndexes(expandRevertIndexes)
        if !addedColumns.isEmpty {
            let drops = addedColumns.map { "DROP COLUMN IF EXISTS \(SQLName.identifier($0.definition.name))" }
            statements.append(.init("ALTER TABLE \(table.sql)\n    " + drops.joined(separator: ",\n    "), lock: .accessExclusive, work: .catalog))
        }
        if trigger.isNeeded {
            statements.append(.init("DELETE FROM cutover.legacy_activity WHERE table_name = \(SQLName.literal(table.sql))",
                                    lock: nil, work: .catalog))
        }
        if statements.isEmpty {
            statements.append(.init("SELECT 'nothing to revert'", lock: nil, work: .catalog))
        }
        return [CompiledFile("compiled/expand_revert.sql", purpose: """
            Revert expand: the sync trigger, the row functions, the plan's indexes and the modern columns go.
            Every legacy column, which the trigger kept current, stays, so no row written meanwhile is lost.
            """, statements: statements)]
    }

    // MARK: Pieces

    func setDefault(_ column: String, _ value: SQLExpression) -> CompiledStatement {
        .init("ALTER TABLE \(table.sql) ALTER COLUMN \(SQLName.identifier(column)) SET DEFAULT \(value.text)",
              lock: .accessExclusive, work: .catalog)
    }

    /// The `NOT VALID` form of a check or foreign key; nil for other kinds.
    func addNotValid(_ constraint: Constraint) -> CompiledStatement? {
        let name = SQLName.identifier(constraint.name)
        switch constraint.kind {
        case .check(let expression):
            return .init("ALTER TABLE \(table.sql) ADD CONSTRAINT \(name) CHECK (\(expression.text)) NOT VALID",
                         lock: .accessExclusive, work: .catalog)
        case .foreignKey(let columns, let references):
            let action = references.onDelete.map { " ON DELETE \($0)" } ?? ""
            return .init("ALTER TABLE \(table.sql) ADD CONSTRAINT \(name) FOREIGN KEY (\(Self.list(columns))) "
                            + "REFERENCES \(references.table.sql) (\(Self.list(references.columns)))\(action) NOT VALID",
                         lock: .shareRowExclusive, work: .catalog, note: "SHARE ROW EXCLUSIVE on \(references.table.sql) too")
        case .notNull, .unique:
            return nil
        }
    }

    func createIndex(_ name: String, columns: [String], isUnique: Bool, method: String, predicate: SQLExpression?) -> String {
        "CREATE \(isUnique ? "UNIQUE " : "")INDEX CONCURRENTLY IF NOT EXISTS \(SQLName.identifier(name)) ON \(table.sql)"
            + (method == "btree" ? "" : " USING \(method)") + " (\(Self.list(columns)))"
            + (predicate.map { " WHERE \($0.text)" } ?? "")
    }

    func concurrentIndex(_ path: String, purpose: String, sql: String) -> CompiledFile {
        CompiledFile(path, purpose: purpose + "\nCONCURRENTLY lets reads and writes go on; the runner drops an index an interrupted build left invalid.",
                     statements: [.init(sql, lock: .shareUpdateExclusive, work: .scan)], runsInTransaction: false)
    }

    /// `compiled/<prefix>_<n>_<name>.sql`, the name's characters outside a path's `A-Z a-z 0-9 _ -` made `_`.
    static func path(_ prefix: String, _ number: Int, _ name: String) -> String {
        let safe = String(name.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-": Character(scalar)
            default: "_"
            }
        }.prefix(100))
        return "compiled/\(prefix)_\(number)_\(safe).sql"
    }

    /// `a IS NULL AND b IS NULL`, each column prefixed with `alias.` when given.
    static func allNull(_ columns: [String], alias: String?) -> String {
        let parts = columns.map { (alias.map { $0 + "." } ?? "") + SQLName.identifier($0) + " IS NULL" }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")"
    }
}
