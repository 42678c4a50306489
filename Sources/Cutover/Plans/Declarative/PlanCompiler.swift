extension DeclarativePlan {
    /// Compiles the plan into the steps, files and checks the runner runs.
    ///
    /// The result is a plan as a format-1 manifest would give it, whose files are the
    /// compiled ones (under `compiled/`) and the `sql` operations' own:
    ///
    /// - expand: the new columns (nullable, no default an old writer would see: no rewrite),
    ///   the constraints only new writers can break (`NOT VALID`; unique by an index built
    ///   `CONCURRENTLY`), the row functions, the ``SyncTrigger``;
    /// - backfill: keyset batches along the key's index (see ``PlanCompiler/backfillBatch``);
    /// - contract: every other constraint the safe way, then, in its last file, the legacy
    ///   columns, the trigger and the functions dropped;
    /// - each step's derived checks, then the plan's own, and the reverts of expand and of a contract stopped
    ///   before its last file.
    public func compile() -> CompiledPlan {
        PlanCompiler(self).compiled()
    }
}

/// Turns a ``DeclarativePlan`` into a ``CompiledPlan``; its extensions make each step's files.
struct PlanCompiler {
    /// A constraint contract (or expand, for columns only new writers write) adds.
    struct Constraint {
        enum Kind {
            case notNull(String)
            case check(SQLExpression)
            case foreignKey(columns: [String], references: DeclarativeOperation.ForeignKey)
            case unique(columns: [String], isConstraint: Bool)
        }
        let name: String
        let kind: Kind
    }

    /// Columns a backfill fills while all of `columns` are NULL and one function gives a value.
    struct BackfillTarget {
        let columns: [String]
        let functions: [RowFunction]
        /// The sync trigger fills the columns when the backfill names them (an `alter_column`'s),
        /// so that each row's conversion calls its functions once; otherwise the batch calls
        /// them itself.
        var isFilledByTrigger = false
    }

    let plan: DeclarativePlan
    let table: QualifiedName
    let stem: String
    let trigger: SyncTrigger
    let addedColumns: [(definition: DeclarativeOperation.ColumnDefinition, isFilledByTrigger: Bool)]
    let droppedColumns: [String]
    let targets: [BackfillTarget]
    let expandConstraints: [Constraint]
    let contractConstraints: [Constraint]

    init(_ plan: DeclarativePlan) {
        self.plan = plan
        table = plan.table
        let name = plan.table.name
        let stem = plan.table.schema.map { $0 == "public" ? name : "\($0)_\(name)" } ?? name
        self.stem = stem
        func function(_ column: String, _ suffix: String, _ expression: SQLExpression) -> RowFunction {
            RowFunction(name: SQLName.derived(stem, column, suffix), column: column, expression: expression,
                        subject: "the \(suffix == "down" ? "down" : "up") expression of \(column)")
        }
        var groups: [SyncTrigger.Group] = []
        var fills: [SyncTrigger.Fill] = []
        var added: [(definition: DeclarativeOperation.ColumnDefinition, isFilledByTrigger: Bool)] = []
        var dropped: [String] = []
        var targets: [BackfillTarget] = []
        var atExpand: [Constraint] = []
        var atContract: [Constraint] = []
        func constraints(of column: DeclarativeOperation.ColumnDefinition, isFed: Bool) {
            var list: [Constraint] = []
            if let check = column.check { list.append(.init(name: SQLName.derived(stem, column.name, "check"), kind: .check(check))) }
            if let references = column.references {
                list.append(.init(name: SQLName.derived(stem, column.name, "fkey"),
                                  kind: .foreignKey(columns: [column.name], references: references)))
            }
            if column.isUnique {
                list.append(.init(name: SQLName.derived(stem, column.name, "key"), kind: .unique(columns: [column.name], isConstraint: false)))
            }
            if isFed { atContract += list } else { atExpand += list }
            if column.isNotNull {
                atContract.append(.init(name: SQLName.derived(stem, column.name, "not_null"), kind: .notNull(column.name)))
            }
        }
        for operation in plan.operations {
            switch operation {
            case .addColumn(let column):
                let isFed = column.fill != nil
                added.append((column, isFed && column.up != nil))
                constraints(of: column, isFed: isFed)
                if let fill = column.fill {
                    let up = function(column.name, "up", fill)
                    targets.append(.init(columns: [column.name], functions: [up]))
                    if column.up != nil { fills.append(.init(column: column.name, kind: .newColumn, function: up)) }
                }
            case .alterColumn(let change):
                let up = zip(change.to, change.up).map { function($0.name, "up", $1) }
                let down = zip(change.from, change.down).map { function($0, "down", $1) }
                groups.append(.init(legacy: change.from, modern: change.to.map(\.name), up: up, down: down))
                targets.append(.init(columns: change.to.map(\.name), functions: up, isFilledByTrigger: true))
                for column in change.to {
                    added.append((column, true))
                    constraints(of: column, isFed: true)
                }
                dropped += change.from
            case .dropColumn(let name, let down):
                fills.append(.init(column: name, kind: .dropped, function: function(name, "down", down)))
                dropped.append(name)
            case .setNotNull(let column, let up):
                let fill = up.map { function(column, "fill", $0) }
                fills.append(.init(column: column, kind: .notNull, function: fill))
                if let fill { targets.append(.init(columns: [column], functions: [fill])) }
                atContract.append(.init(name: SQLName.derived(stem, column, "not_null"), kind: .notNull(column)))
            case .addConstraint(let constraint):
                switch constraint.kind {
                case .check(let expression): atContract.append(.init(name: constraint.name, kind: .check(expression)))
                case .unique(let columns): atContract.append(.init(name: constraint.name, kind: .unique(columns: columns, isConstraint: true)))
                case .foreignKey(let columns, let references):
                    atContract.append(.init(name: constraint.name, kind: .foreignKey(columns: columns, references: references)))
                }
            case .createIndex, .dropIndex, .dropConstraint, .sql, .renameTable:
                break
            }
        }
        trigger = SyncTrigger(table: table, stem: stem, key: targets.isEmpty ? [] : plan.key, groups: groups, fills: fills)
        addedColumns = added
        droppedColumns = dropped
        self.targets = targets
        // NOT NULL first, so a CHECK never reports a NULL as its violation.
        let notNullFirst = { (constraint: Constraint) -> Bool in if case .notNull = constraint.kind { true } else { false } }
        expandConstraints = atExpand
        contractConstraints = atContract.filter(notNullFirst) + atContract.filter { !notNullFirst($0) }
    }

    func compiled() -> CompiledPlan {
        if let newName = renamedTo { return renameCompiled(to: newName) }
        let expand = expandFiles()
        let expandRevert = expandRevertFiles()
        let (batch, remaining, split, direct) = (backfillBatch(), backfillRemaining(), backfillSplit(), backfillDirectBatch())
        let (contract, contractRevert) = contractFiles()
        let handWritten = plan.operations.compactMap { operation -> DeclarativeOperation.HandWrittenSQL? in
            guard case .sql(let files) = operation else { return nil }
            return files
        }
        let contractApply = contract.dropLast().map(\.planFile) + handWritten.flatMap(\.contract) + contract.suffix(1).map(\.planFile)
        let checks = { (kind: PlanStep.Kind) in derivedChecks(kind) + (plan.checks[kind] ?? []) }
        let steps = [
            PlanStep(kind: .expand, apply: expand.map(\.planFile) + handWritten.flatMap(\.expand),
                     revert: handWritten.reversed().flatMap(\.revert) + expandRevert.map(\.planFile), backfill: nil,
                     checks: checks(.expand)),
            PlanStep(kind: .switch, apply: [], revert: [], backfill: nil, checks: checks(.switch)),
            PlanStep(kind: .backfill, apply: [], revert: [],
                     backfill: PlanBackfill(batch: batch.planFile, remaining: remaining.planFile, batchSize: plan.batchSize,
                                            niceRatio: plan.niceRatio, maximumReplicaLag: plan.maximumReplicaLag,
                                            throttle: plan.backfillThrottle, split: split.planFile, directBatch: direct?.planFile),
                     checks: checks(.backfill)),
            PlanStep(kind: .contract, apply: contractApply, revert: contractRevert.map(\.planFile), backfill: nil,
                     checks: checks(.contract)),
        ]
        let migration = MigrationPlan(name: plan.name, table: table.sql, legacyApplicationPattern: plan.legacyApplicationPattern,
                                      modernWriterWindow: plan.modernWriterWindow, steps: steps, statements: plan.statements)
        return CompiledPlan(plan: migration, files: expand + expandRevert + [batch, remaining, split] + [direct].compactMap { $0 } + contract + contractRevert,
                            tracksLegacyWrites: trigger.isNeeded, legacyWritesNote: "the plan changes nothing old writers write",
                            expressionProbe: expressionProbe(), declaration: plan,
                            syncFunction: trigger.isNeeded ? trigger.function : nil, expandRevertChecks: expandRevertChecks())
    }

    // MARK: Shared pieces

    /// The name of an index in the table's schema, as SQL.
    func indexName(_ name: String) -> String {
        (table.schema.map { SQLName.identifier($0) + "." } ?? "") + SQLName.identifier(name)
    }

    /// The index of rows still to convert that expand built before the backfill walked the
    /// key; expand's revert and contract drop it if a migration begun then has it.
    var unconvertedIndex: String { SQLName.derived(stem, "cutover_unconverted") }

    /// `a, b` as identifiers.
    static func list(_ columns: [String]) -> String {
        columns.map(SQLName.identifier).joined(separator: ", ")
    }

    /// The row functions the plan creates: the trigger's.
    var rowFunctions: [RowFunction] {
        var seen: Set<String> = []
        return trigger.rowFunctions.filter { seen.insert($0.name).inserted }
            + targets.flatMap(\.functions).filter { seen.insert($0.name).inserted }
    }

    /// The statement that drops the trigger, its function and the row functions.
    func dropSync() -> [CompiledStatement] {
        var statements: [CompiledStatement] = []
        if trigger.isNeeded {
            statements.append(.init("DROP TRIGGER IF EXISTS \(SyncTrigger.triggerName) ON \(table.sql)", lock: .accessExclusive, work: .catalog))
        }
        // The comparisons by name alone: their arguments' types are the columns', which may be gone.
        let functions = (trigger.isNeeded ? ["\(trigger.function)()", "\(trigger.noteFunction)()"] + trigger.comparisons.map(\.qualifiedName) : [])
            + rowFunctions.map { $0.signature(table) }
        if !functions.isEmpty {
            statements.append(.init("DROP FUNCTION IF EXISTS " + functions.joined(separator: ", "), lock: nil, work: .catalog))
        }
        return statements
    }

    /// `DROP INDEX IF EXISTS …` for these index names, or nothing.
    func dropIndexes(_ names: [String]) -> [CompiledStatement] {
        guard !names.isEmpty else { return [] }
        return [.init("DROP INDEX IF EXISTS " + names.map(indexName).joined(separator: ", "), lock: .accessExclusive, work: .catalog)]
    }
}
