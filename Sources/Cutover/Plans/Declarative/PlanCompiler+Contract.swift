extension PlanCompiler {
    /// Contract's files, its last one the point of no return, and the revert of the others.
    ///
    /// NOT NULL the safe way: before PostgreSQL 18 a `CHECK (c IS NOT NULL) NOT VALID`, its
    /// validation, `SET NOT NULL` (which the validated check spares a scan) and the check
    /// dropped; from 18 on the column's own `NOT NULL … NOT VALID`, validated. Checks and foreign
    /// keys `NOT VALID`, then validated; unique by an index built `CONCURRENTLY`.
    func contractFiles() -> (apply: [CompiledFile], revert: [CompiledFile]) {
        var files: [CompiledFile] = []
        let notNull = contractConstraints.compactMap { constraint -> (name: String, column: String)? in
            guard case .notNull(let column) = constraint.kind else { return nil }
            return (SQLName.identifier(constraint.name), SQLName.identifier(column))
        }
        let before18 = ServerVersionRange("< 18")
        let from18 = ServerVersionRange(">= 18")
        if !notNull.isEmpty {
            files.append(CompiledFile("compiled/contract_not_null.sql", purpose: """
                Contract before PostgreSQL 18: promise NOT NULL for new writes without scanning under an
                exclusive lock (NOT VALID checks new writes only).
                """, statements: notNull.map {
                    CompiledStatement("ALTER TABLE \(table.sql) ADD CONSTRAINT \($0.name) CHECK (\($0.column) IS NOT NULL) NOT VALID",
                          lock: .accessExclusive, work: .catalog)
                }, serverVersion: before18))
            files.append(CompiledFile("compiled/contract_not_null_pg18.sql", purpose: """
                Contract on PostgreSQL 18 and later: the column's own NOT NULL constraint, NOT VALID; once
                validated it is the column's NOT NULL, with no CHECK and no SET NOT NULL after.
                """, statements: notNull.map {
                    CompiledStatement("ALTER TABLE \(table.sql) ADD CONSTRAINT \($0.name) NOT NULL \($0.column) NOT VALID",
                          lock: .accessExclusive, work: .catalog)
                }, serverVersion: from18))
        }
        let notValid = contractConstraints.compactMap(addNotValid)
        if !notValid.isEmpty {
            files.append(CompiledFile("compiled/contract_constraints.sql",
                                      purpose: "Contract: the modern constraints, NOT VALID: enforced for new writes, the old rows validated next.",
                                      statements: notValid))
        }
        var uniqueIndexes: [String] = []
        var uniqueConstraints: [String] = []
        for constraint in contractConstraints {
            guard case .unique(let columns, let isConstraint) = constraint.kind else { continue }
            if isConstraint { uniqueConstraints.append(constraint.name) } else { uniqueIndexes.append(constraint.name) }
            files.append(concurrentIndex(Self.path("contract_index", files.count, constraint.name),
                                         purpose: "Contract, outside a transaction: a unique index.",
                                         sql: createIndex(constraint.name, columns: columns, isUnique: true, method: "btree", predicate: nil)))
        }
        for operation in plan.operations {
            guard case .createIndex(let index) = operation, index.isUnique else { continue }
            uniqueIndexes.append(index.name)
            files.append(concurrentIndex(Self.path("contract_index", files.count, index.name),
                                         purpose: "Contract, outside a transaction: a unique index old writers could have broken.",
                                         sql: createIndex(index.name, columns: index.columns, isUnique: true, method: index.method,
                                                          predicate: index.predicate)))
        }
        let validated = contractConstraints.filter { if case .unique = $0.kind { false } else { true } }
        if !validated.isEmpty {
            files.append(CompiledFile("compiled/contract_validate.sql",
                                      purpose: "Contract: check the existing rows; VALIDATE lets reads and writes go on while it scans.",
                                      statements: validated.map { constraint in
                                          var note: String?
                                          if case .foreignKey(_, let references) = constraint.kind { note = "ROW SHARE on \(references.table.sql)" }
                                          return CompiledStatement("ALTER TABLE \(table.sql) VALIDATE CONSTRAINT \(SQLName.identifier(constraint.name))",
                                                       lock: .shareUpdateExclusive, work: .scan, note: note)
                                      }))
        }
        if !notNull.isEmpty {
            files.append(CompiledFile("compiled/contract_set_not_null.sql", purpose: """
                Contract before PostgreSQL 18: SET NOT NULL uses the validated CHECK instead of scanning, and
                the CHECK, now redundant, goes.
                """, statements: notNull.flatMap { column -> [CompiledStatement] in
                    [.init("ALTER TABLE \(table.sql) ALTER COLUMN \(column.column) SET NOT NULL", lock: .accessExclusive, work: .catalog),
                     .init("ALTER TABLE \(table.sql) DROP CONSTRAINT IF EXISTS \(column.name)", lock: .accessExclusive, work: .catalog)]
                }, serverVersion: before18))
        }
        if !uniqueConstraints.isEmpty {
            files.append(CompiledFile("compiled/contract_unique_constraints.sql",
                                      purpose: "Contract: the unique constraints, over the indexes just built.",
                                      statements: uniqueConstraints.map {
                                          CompiledStatement("ALTER TABLE \(table.sql) ADD CONSTRAINT \(SQLName.identifier($0)) UNIQUE USING INDEX \(SQLName.identifier($0))",
                                                lock: .accessExclusive, work: .catalog)
                                      }))
        }
        let revert = revertFiles(notNull: notNull, uniqueIndexes: uniqueIndexes, hasConstraints: !files.isEmpty)
        files.append(dropFile())
        return (files, revert)
    }

    /// The indexes contract's last file drops: the plan's `drop_index` ones, and the index of
    /// unconverted rows a migration begun before the backfill walked the key may have.
    var contractDroppedIndexes: [String] {
        var indexes = targets.isEmpty ? [] : [unconvertedIndex]
        for operation in plan.operations { if case .dropIndex(let name) = operation { indexes.append(name) } }
        return indexes
    }

    /// The constraints contract's last file drops: the plan's `drop_constraint` ones.
    var contractDroppedConstraints: [String] {
        plan.operations.compactMap { if case .dropConstraint(let name) = $0 { name } else { nil } }
    }

    /// The last file: the legacy representation goes; old application versions stop working here.
    private func dropFile() -> CompiledFile {
        var statements = dropSync()
        statements += dropIndexes(contractDroppedIndexes)
        for name in contractDroppedConstraints {
            statements.append(.init("ALTER TABLE \(table.sql) DROP CONSTRAINT IF EXISTS \(SQLName.identifier(name))",
                                    lock: .accessExclusive, work: .catalog))
        }
        for (column, isFilledByTrigger) in addedColumns where isFilledByTrigger {
            if let value = column.defaultValue { statements.append(setDefault(column.name, value)) }
        }
        if !droppedColumns.isEmpty {
            let drops = droppedColumns.map { "DROP COLUMN IF EXISTS \(SQLName.identifier($0))" }
            statements.append(.init("ALTER TABLE \(table.sql)\n    " + drops.joined(separator: ",\n    "), lock: .accessExclusive, work: .catalog))
        }
        if statements.isEmpty { statements.append(.init("SELECT 'nothing to drop'", lock: nil, work: .catalog)) }
        return CompiledFile("compiled/contract_drop.sql", purpose: """
            Contract, last file and point of no return: the sync trigger, the row functions and the legacy
            representation go; catalog changes only. Old application versions stop working here: contract's
            checks made sure none is left.
            """, statements: statements)
    }

    /// Undoes what contract's files before the last did; nothing when they do nothing.
    private func revertFiles(notNull: [(name: String, column: String)], uniqueIndexes: [String], hasConstraints: Bool) -> [CompiledFile] {
        guard hasConstraints else { return [] }
        var statements = contractConstraints.filter { if case .unique(_, false) = $0.kind { false } else { true } }.map {
            CompiledStatement("ALTER TABLE \(table.sql) DROP CONSTRAINT IF EXISTS \(SQLName.identifier($0.name))",
                              lock: .accessExclusive, work: .catalog)
        }
        statements += dropIndexes(uniqueIndexes)
        statements += notNull.map {
            CompiledStatement("ALTER TABLE \(table.sql) ALTER COLUMN \($0.column) DROP NOT NULL", lock: .accessExclusive, work: .catalog)
        }
        return [CompiledFile("compiled/contract_revert.sql", purpose: """
            Revert a contract stopped before its last file: the constraints and unique indexes it added
            go, and the columns it made NOT NULL are nullable again. Once contract_drop.sql has run,
            nothing brings the legacy representation back.
            """, statements: statements)]
    }
}
