extension PlanCompiler {
    /// The checks the compiler derives for a step, before the plan's own.
    func derivedChecks(_ kind: PlanStep.Kind) -> [PlanCheck] {
        if let newName = renamedTo { return renameChecks(kind, to: newName) }
        return switch kind {
        case .expand: expandChecks()
        case .switch, .backfill: presenceChecks()
        case .contract: presenceChecks() + contractChecks()
        }
    }

    /// Before expand: the table and every column the plan reads exist, and no modern column
    /// does yet, unless this plan's own expand added it (its trigger function exists then).
    func expandChecks() -> [PlanCheck] {
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        var checks = [check("table present", "SELECT \(regclass) IS NOT NULL", expect: .compare(.equal, .boolean(true)),
                            "the table \(table.sql) must exist before expand")]
        let existing = plan.key + plan.columns + droppedColumns + notNullColumns
        checks.append(check("columns present", "SELECT count(*) FROM pg_attribute WHERE attrelid = \(regclass) AND attnum > 0 "
                                + "AND NOT attisdropped AND attname IN (\(Self.literals(existing)))",
                            expect: .compare(.equal, .number(String(existing.count))),
                            "every column the plan names as existing (key, columns, legacy) must exist: "
                                + existing.joined(separator: ", ")))
        if !targets.isEmpty { checks += [keyIndexed(), keyNotNull()] }
        let modern = addedColumns.map(\.definition.name)
        if !modern.isEmpty {
            checks.append(check("modern columns free", "SELECT count(*) FROM pg_attribute WHERE attrelid = \(regclass) AND attnum > 0 "
                                    + "AND NOT attisdropped AND attname IN (\(Self.literals(modern))) "
                                    + "AND to_regprocedure(\(SQLName.literal(trigger.function + "()"))) IS NULL",
                                expect: .compare(.equal, .number("0")),
                                "a column the plan adds exists already: rename it in the plan, or drop it first"))
        }
        return checks
    }

    /// A btree index whose leading columns are the plan's key in its order, which the backfill
    /// walks from its cursor on (``backfillBatch()``): without one each batch would read the
    /// table up to its cursor again. Each of those columns must be a key column of the index
    /// (not an `INCLUDE`d one) with the column's own collation and its type's default btree
    /// operator family: the batch compares the key with the column's own `<` and collation, and
    /// PostgreSQL walks no index that orders it otherwise, such as `(id COLLATE "C")` on a column
    /// of another collation or `(id text_pattern_ops)`, but reads and sorts the whole table in
    /// every batch. A type with no default btree operator class of its own (`varchar`, an enum,
    /// an array, a domain over a domain) takes the default class the index was built with.
    func keyIndexed() -> PlanCheck {
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        let names = "ARRAY[\(Self.literals(plan.key))]"
        return check("key in an index's order", """
            SELECT EXISTS (
                SELECT 1 FROM pg_index AS i
                  JOIN pg_class AS c ON c.oid = i.indexrelid
                  JOIN pg_am AS m ON m.oid = c.relam
                 WHERE i.indrelid = \(regclass) AND m.amname = 'btree' AND i.indisvalid AND i.indpred IS NULL
                   AND i.indnkeyatts >= \(plan.key.count)
                   AND (SELECT count(*) FROM unnest(\(names)) WITH ORDINALITY AS k(name, n)
                          JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attname = k.name
                          JOIN pg_type AS t ON t.oid = a.atttypid
                          JOIN pg_opclass AS o ON o.oid = i.indclass[k.n - 1]
                         WHERE a.attnum = i.indkey[k.n - 1] AND a.attcollation = i.indcollation[k.n - 1]
                           AND o.opcfamily = coalesce(
                               (SELECT d.opcfamily FROM pg_opclass AS d
                                 WHERE d.opcmethod = m.oid AND d.opcdefault
                                   AND d.opcintype = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END),
                               CASE WHEN o.opcdefault THEN o.opcfamily END)) = \(plan.key.count))
            """, expect: .compare(.equal, .boolean(true)),
            "the backfill walks the key (\(plan.key.joined(separator: ", "))) along a btree index that begins with its "
                + "columns in that order, each with the column's own collation and its type's default operator class "
                + "(on an index such as (id COLLATE \"C\") or (id text_pattern_ops) every batch would read and sort the whole table): "
                + "list the key as the primary key or a unique index lists its columns")
    }

    /// No key column takes NULL: the backfill walks the key with comparisons that a NULL key
    /// never passes, so such a row would stay unconverted and contract could never run.
    func keyNotNull() -> PlanCheck {
        let nullable = "SELECT string_agg(attname::text, ', ' ORDER BY attnum) FROM pg_attribute "
            + "WHERE attrelid = to_regclass(\(SQLName.literal(table.sql))) AND attnum > 0 AND NOT attisdropped "
            + "AND attname IN (\(Self.literals(plan.key))) AND NOT attnotnull"
        return check("key columns NOT NULL", nullable, expect: .isNull,
                     "the backfill walks the key in order, and a row whose key is NULL would never be converted: "
                        + "make the key's columns NOT NULL first (a primary key's are)")
    }

    /// Before switch, backfill and contract: the modern columns and the sync trigger are there.
    func presenceChecks() -> [PlanCheck] {
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        var checks: [PlanCheck] = []
        let modern = addedColumns.map(\.definition.name)
        if !modern.isEmpty {
            checks.append(check("modern columns present", "SELECT count(*) FROM pg_attribute WHERE attrelid = \(regclass) "
                                    + "AND attnum > 0 AND NOT attisdropped AND attname IN (\(Self.literals(modern)))",
                                expect: .compare(.equal, .number(String(modern.count))), "expand must have added the modern columns"))
        }
        if trigger.isNeeded {
            checks.append(check("sync trigger enabled", "SELECT count(*) FROM pg_trigger WHERE tgrelid = \(regclass) "
                                    + "AND tgname = \(SQLName.literal(SyncTrigger.triggerName)) AND tgenabled <> 'D'",
                                expect: .compare(.equal, .number("1")),
                                "the sync trigger keeps both representations in step; expand must have created it, enabled"))
        }
        return checks
    }

    /// Before contract: legacy writes are tracked, the representations agree on every row, and
    /// no row breaks a constraint contract adds, so that contract cannot stop half way on data.
    func contractChecks() -> [PlanCheck] {
        var checks: [PlanCheck] = []
        if trigger.isNeeded {
            checks.append(check("legacy writes tracked", "SELECT count(*) FROM cutover.legacy_activity WHERE table_name = "
                                    + SQLName.literal(table.sql), expect: .compare(.equal, .number("1")),
                                "without its row in cutover.legacy_activity, no legacy write could be seen; run expand again"))
        }
        if !droppedColumns.isEmpty {
            checks.append(droppedColumnsUnused())
            checks.append(droppedColumnsTakeNothingThatStays())
        }
        for group in trigger.groups {
            let modern = group.modern.map { "t." + SQLName.identifier($0) }
            let legacy = group.legacy.map { "t." + SQLName.identifier($0) }
            let agrees = "NOT (\(SyncTrigger.distinct(modern, group.up.map { $0.call("t") })))"
                + " OR NOT (\(SyncTrigger.distinct(legacy, group.down.map { $0.call("t") })))"
            checks.append(count("representations agree: \(group.legacy.joined(separator: ", ")) → \(group.modern.joined(separator: ", "))",
                                where: "NOT (\(agrees))",
                                "rows whose modern values are neither up(legacy) nor mapped back by down; fix them before contract"))
        }
        for constraint in contractConstraints {
            switch constraint.kind {
            case .notNull(let column):
                checks.append(count("no NULL in \(column)", where: "t.\(SQLName.identifier(column)) IS NULL",
                                    "contract makes \(column) NOT NULL; backfill, or give those rows a value"))
            case .check(let expression):
                checks.append(count("no row breaks \(constraint.name)", where: "NOT (\(expression.text))",
                                    "contract adds CHECK (\(expression.text)); fix those rows first"))
            case .foreignKey(let columns, let references):
                let own = columns.map { "t." + SQLName.identifier($0) }
                let match = zip(own, references.columns).map { "r.\(SQLName.identifier($1)) = \($0)" }.joined(separator: " AND ")
                checks.append(count("no row breaks \(constraint.name)",
                                    where: own.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
                                        + " AND NOT EXISTS (SELECT 1 FROM \(references.table.sql) AS r WHERE \(match))",
                                    "contract adds a foreign key to \(references.table.sql); fix the rows it refers from"))
            case .unique(let columns, _):
                let list = Self.list(columns)
                checks.append(check("no duplicate for \(constraint.name)",
                                    "SELECT count(*) FROM (SELECT 1 FROM \(table.sql) WHERE (\(list)) IS NOT NULL "
                                        + "GROUP BY \(list) HAVING count(*) > 1) AS duplicates",
                                    expect: .compare(.equal, .number("0")), "contract adds a unique index on \(list); fix the duplicates first"))
            }
        }
        return checks
    }

    /// Nothing but the table's own indexes and constraints, which go with them, depends on the
    /// columns contract drops: a view, a materialized view, a policy, a function with an
    /// SQL-standard body, another table's foreign key, a generated column or a trigger of the
    /// application's would make the drop fail after contract's constraints were applied. The
    /// sync trigger, which contract drops first, is left out.
    func droppedColumnsUnused() -> PlanCheck {
        columnsUnused(droppedColumns, name: "nothing else uses the dropped columns",
                      "contract drops \(droppedColumns.joined(separator: ", ")), and these use them, so the drop would fail half way "
                          + "through contract: drop them or make them again over the modern columns first")
    }

    /// Nothing that also covers a column that stays goes silently with the columns contract drops.
    /// `DROP COLUMN` drops every index, constraint of the table's own and statistics object that
    /// names a dropped column, in its key, expression or predicate, without a word: an index on
    /// the dropped column alone goes with it as it should, but a unique constraint on
    /// `(tenant_id, legacy)`, an index on `(other)` whose predicate names the legacy column, or a
    /// CHECK naming another column too would change what the remaining columns keep, at the
    /// point of no return. Each such object is named, to be made again without the dropped
    /// columns (or dropped) before contract; those the plan's own contract drops are left out.
    func droppedColumnsTakeNothingThatStays() -> PlanCheck {
        columnsTakeNothingThatStays(droppedColumns, name: "nothing that stays goes with the dropped columns",
                                    sparing: (contractDroppedIndexes, contractDroppedConstraints),
                                    "contract's DROP COLUMN would drop these with \(droppedColumns.joined(separator: ", ")) without a word, "
                                        + "and each covers a column that stays: make each again without the dropped columns, or drop it, first")
    }

    /// The indexes, constraints of the table's own and statistics objects that name one of
    /// `columns` and also a column that stays, other than the indexes and constraints `sparing`
    /// names (those the step drops itself), by name; NULL when none.
    private func columnsTakeNothingThatStays(_ columns: [String], name: String, sparing: (indexes: [String], constraints: [String]),
                                             _ message: String) -> PlanCheck {
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        let dropped = Self.literals(columns)
        var spared = ""
        if !sparing.indexes.isEmpty {
            let names = sparing.indexes.map { "to_regclass(\(SQLName.literal(indexName($0))))" }.joined(separator: ", ")
            spared += "\n   AND NOT (o.classid = 'pg_class'::regclass AND o.objid IN (SELECT r FROM unnest(ARRAY[\(names)]) AS r WHERE r IS NOT NULL))"
        }
        if !sparing.constraints.isEmpty {
            spared += "\n   AND NOT (o.classid = 'pg_constraint'::regclass AND EXISTS (SELECT 1 FROM pg_constraint AS c "
                + "WHERE c.oid = o.objid AND c.conname IN (\(Self.literals(sparing.constraints)))))"
        }
        return check(name, """
            SELECT string_agg(pg_describe_object(o.classid, o.objid, 0), ', ' ORDER BY pg_describe_object(o.classid, o.objid, 0))
              FROM (SELECT DISTINCT d.classid, d.objid FROM pg_depend AS d
                      JOIN pg_attribute AS a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                     WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = \(regclass)
                       AND d.classid IN ('pg_class'::regclass, 'pg_constraint'::regclass, 'pg_statistic_ext'::regclass)
                       AND a.attname IN (\(dropped))) AS o
             WHERE EXISTS (SELECT 1 FROM pg_depend AS k
                             JOIN pg_attribute AS b ON b.attrelid = k.refobjid AND b.attnum = k.refobjsubid
                            WHERE k.classid = o.classid AND k.objid = o.objid
                              AND k.refclassid = 'pg_class'::regclass AND k.refobjid = \(regclass)
                              AND b.attname NOT IN (\(dropped)))\(spared)
            """, expect: .isNull, message)
    }

    /// Before `phase rollback expand`: nothing of the application's uses the columns the revert
    /// drops, or the revert would stop on it (its one transaction keeps the state), and nothing
    /// that also covers a column that stays goes with them (an index the new application made on
    /// a modern column and another); none when expand adds no column.
    func expandRevertChecks() -> [PlanCheck] {
        let modern = addedColumns.map(\.definition.name)
        guard !modern.isEmpty else { return [] }
        let dropped = modern.joined(separator: ", ")
        return [columnsUnused(modern, name: "nothing else uses the modern columns",
                              "rollback expand drops \(dropped), and these use them: drop them, or make them again over the legacy columns, first"),
                columnsTakeNothingThatStays(modern, name: "nothing that stays goes with the modern columns",
                                            sparing: (expandRevertIndexes, []),
                                            "rollback expand's DROP COLUMN would drop these with \(dropped) without a word, and each covers "
                                                + "a column that stays: make each again without the modern columns, or drop it, first")]
    }

    /// The objects, other than the table's own indexes and constraints, the sync trigger and
    /// the plan's row functions, that depend on any of `columns` (read from `pg_depend`), by name; NULL when none. A CHECK
    /// of the table's own depends on its columns in the normal way too, but `DROP COLUMN` drops
    /// it with the column, so it is left out; another table's foreign key is not.
    private func columnsUnused(_ columns: [String], name: String, _ message: String) -> PlanCheck {
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        // The row functions read the columns by their SQL-standard bodies; the step drops them.
        let names = rowFunctions.map(\.name)
        let ownFunctions = names.isEmpty ? "" : """

               AND NOT (d.classid = 'pg_proc'::regclass AND EXISTS (
                   SELECT 1 FROM pg_proc AS f WHERE f.oid = d.objid AND f.pronamespace = 'cutover'::regnamespace
                      AND f.proname IN (\(Self.literals(names)))))
            """
        return check(name, """
            SELECT string_agg(DISTINCT regexp_replace(pg_describe_object(d.classid, d.objid, d.objsubid), '^rule _RETURN on ', ''), ', ')
              FROM pg_depend AS d
              JOIN pg_attribute AS a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
             WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = \(regclass) AND d.deptype = 'n'
               AND a.attname IN (\(Self.literals(columns)))
               AND NOT (d.classid = 'pg_trigger'::regclass AND EXISTS (
                   SELECT 1 FROM pg_trigger AS g WHERE g.oid = d.objid AND g.tgname = \(SQLName.literal(SyncTrigger.triggerName))))
               AND NOT (d.classid = 'pg_constraint'::regclass AND EXISTS (
                   SELECT 1 FROM pg_constraint AS k WHERE k.oid = d.objid AND k.conrelid = d.refobjid))\(ownFunctions)
            """, expect: .isNull, message)
    }

    private var notNullColumns: [String] {
        plan.operations.compactMap { if case .setNotNull(let column, _) = $0 { column } else { nil } }
    }

    private func count(_ name: String, where condition: String, _ message: String) -> PlanCheck {
        check(name, "SELECT count(*) FROM \(table.sql) AS t WHERE \(condition)", expect: .compare(.equal, .number("0")), message)
    }

    private func check(_ name: String, _ sql: String, expect: CheckExpectation, _ message: String) -> PlanCheck {
        PlanCheck(name: name, query: .inline(sql), expectation: expect, message: message)
    }

    private static func literals(_ names: [String]) -> String {
        names.map(SQLName.literal).joined(separator: ", ")
    }
}
